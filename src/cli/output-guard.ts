// The last line of defence for the CLI's own output: every write to stdout and stderr is scrubbed
// of URL userinfo, Basic/Bearer credentials and the secret values the process knows (secret-named
// environment variables, and the secrets of each config a command loads). Commands already print
// URLs through safeUrl(); this catches what a message quotes that nobody thought of (CI logs and
// pull-request comments keep what a command prints).
import { createScrubber, configSecrets, secretForms, type SecretBearingConfig } from '../telemetry/index.js';

/** Environment variables whose value is a credential by their name. */
const SECRET_NAME = /SECRET|PASSWORD|PASSWD|TOKEN|CREDENTIAL|API_?KEY|PRIVATE/i;

const known = new Set<string>();
let list: readonly string[] = [];

/** Secrets the guard scrubs from now on. */
export function guardSecrets(secrets: Iterable<string>): void {
  const before = known.size;
  for (const s of secrets) if (s !== '') known.add(s);
  if (known.size !== before) list = [...known];
}

/** The secrets of a loaded config (API key secrets, Redis passwords). */
export function guardConfig(config: SecretBearingConfig): void {
  guardSecrets(configSecrets(config));
}

/** Secret-named variables of the environment, in every form they may be printed in. */
export function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env).flatMap(([name, value]) =>
    // a short value ("true", "none") is a flag, not a credential: scrubbing it would garble words
    value !== undefined && value.length >= 6 && SECRET_NAME.test(name) ? secretForms(value) : [],
  );
}

/** Wraps the stream's write so that everything written passes the scrubber first. */
export function guardStream(
  stream: NodeJS.WriteStream,
  scrub: (text: string) => string = createScrubber(() => list),
): void {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const guarded = (chunk: unknown, ...rest: unknown[]): boolean =>
    write(typeof chunk === 'string' ? scrub(chunk) : chunk, ...rest);
  stream.write = guarded;
}

/** Guards stdout and stderr of this process with the environment's secrets known. */
export function guardOutput(env: NodeJS.ProcessEnv = process.env): void {
  guardSecrets(environmentSecrets(env));
  guardStream(process.stdout);
  guardStream(process.stderr);
}
