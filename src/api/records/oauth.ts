/** OAuth records (shapes the spec leaves "not shown"). */
import { Type, type Static } from '@sinclair/typebox';
import { OAUTH_SCOPES, type OauthIntegration, type OauthRequest } from '../../accounts/oauth.js';
import { IsoTime, Nullable, StringEnum, iso, isoOrNull } from '../../records/common.js';

const Scope = StringEnum(OAUTH_SCOPES, {
  description: 'read: your account data; trade: orders, positions, TpSl, leverage, faucet; withdraw: withdrawals; '
    + 'account: profile, favourites, trade signals, API keys, OAuth approvals',
});

export const OauthClientRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  redirectUri: Type.String(),
});

export function toOauthClient(i: OauthIntegration): Static<typeof OauthClientRecord> {
  return { id: i.id, name: i.name, description: i.description, redirectUri: i.redirectUri };
}

export const OauthGetClientRecord = Type.Object({
  requestId: Type.String({ description: 'the id the wallet signs ("Oauth consent" oauthRequestId) to approve' }),
  client: OauthClientRecord,
  scopes: Type.Array(Scope),
  state: Type.String(),
  expiresAt: IsoTime,
}, { description: 'OauthGetClientResponse: opens a consent request' });

export const OauthApproveRecord = Type.Object({
  requestId: Type.String(),
  redirectUrl: Type.String({ description: 'redirectUri with code and state' }),
  code: Type.String({ description: 'single-use; the integration exchanges it at POST /api/oauth/token' }),
  state: Type.String(),
  scopes: Type.Array(Scope),
  expiresAt: IsoTime,
}, { description: 'OauthResponse' });

export const OauthDenyRecord = Type.Object({
  requestId: Type.String(),
  redirectUrl: Type.String({ description: 'redirectUri with error=access_denied and state' }),
  state: Type.String(),
}, { description: 'OauthDenyResponse' });

export const OauthTokenRecord = Type.Object({
  accessToken: Type.String({ description: 'send as Authorization: Bearer <accessToken>' }),
  tokenType: Type.Literal('Bearer'),
  scopes: Type.Array(Scope),
  expiresAt: IsoTime,
});

export const OauthRequestRecord = Type.Object({
  id: Type.String(),
  client: Type.Object({ id: Type.String(), name: Type.String() }),
  scopes: Type.Array(Scope),
  status: StringEnum(['approved', 'rejected', 'revoked'] as const),
  createdAt: IsoTime,
  decidedAt: Nullable(IsoTime),
  expiresAt: IsoTime,
});

export function toOauthRequest(r: OauthRequest, client: OauthIntegration | undefined): Static<typeof OauthRequestRecord> {
  return {
    id: r.id, client: { id: r.integrationId, name: client?.name ?? '' }, scopes: r.scopes, status: r.status as 'approved' | 'rejected' | 'revoked',
    createdAt: iso(r.createdAt), decidedAt: isoOrNull(r.decidedAt), expiresAt: iso(r.expiresAt),
  };
}

export const OauthRequestListRecord = Type.Object({ list: Type.Array(OauthRequestRecord), count: Type.Integer() }, { description: 'OauthRequestListResponse' });

export const OauthIntegrationRecord = Type.Object({
  ...OauthClientRecord.properties,
  scopes: Type.Array(Scope),
  createdAt: IsoTime,
});

export function toOauthIntegration(i: OauthIntegration): Static<typeof OauthIntegrationRecord> {
  return { ...toOauthClient(i), scopes: i.scopes, createdAt: iso(i.createdAt) };
}

export const OauthIntegrationCreatedRecord = Type.Object({
  integration: OauthIntegrationRecord,
  clientSecret: Type.String({ description: 'shown once' }),
});
