// Reverse private endpoint (docs/platform-api.md#reverse-private-endpoints), enums from enums.ts.
import { z } from 'zod';
import { MskAuthentication, ReversePrivateEndpointStatus, ReversePrivateEndpointType } from './enums.js';
import { Uuid } from './ids.js';

export const ReversePrivateEndpoint = z.looseObject({
  id: Uuid,
  serviceId: Uuid,
  description: z.string().max(255),
  type: ReversePrivateEndpointType,
  vpcEndpointServiceName: z.string().nullish(),
  vpcResourceConfigurationId: z.string().nullish(),
  vpcResourceShareArn: z.string().nullish(),
  mskClusterArn: z.string().nullish(),
  mskAuthentication: MskAuthentication.nullish(),
  endpointId: z.string().nullish(),
  dnsNames: z.array(z.string()),
  privateDnsNames: z.array(z.string()),
  status: ReversePrivateEndpointStatus,
});
export type ReversePrivateEndpoint = z.infer<typeof ReversePrivateEndpoint>;
