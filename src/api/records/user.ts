/** User, session and API-key records (REST only; the user-{id} channel's record is in src/records/user.ts). */
import { Type, type Static } from '@sinclair/typebox';
import { SCOPES, type ApiKeyRecord, type TokenPair, type UserRecord } from '../../auth/types.js';
import { IsoTime, Nullable, StringEnum, iso, isoOrNull } from '../../records/common.js';

/** GET /api/user/me (the fields public clients read). */
export const UserWireRecord = Type.Object({
  id: Type.String(),
  authId: Type.String(),
  exchangeId: Type.Integer({ description: 'used in per-user channel names' }),
  name: Nullable(Type.String()),
  email: Nullable(Type.String()),
  wallet: Type.String(),
  role: Type.String({ description: 'user or admin; admins may call operator routes' }),
  social: Type.Array(Type.Object({ type: Type.String(), value: Type.String() })),
  avatar: Nullable(Type.String()),
  level: Type.Integer(),
  locale: Type.String(),
  dateTimeFormat: Type.String(),
  favoriteInstruments: Type.Array(Type.String()),
  marginCall: Type.Boolean(),
  createdAt: IsoTime,
  updatedAt: IsoTime,
}, { description: 'User' });
export type UserWireRecord = Static<typeof UserWireRecord>;

export function toUser(u: UserRecord, marginCall: boolean): UserWireRecord {
  return {
    id: u.id, authId: u.authId, exchangeId: u.exchangeId, name: u.name, email: u.email, wallet: u.wallet, role: u.role,
    social: u.social.map((s) => ({ type: s.type, value: s.value })), avatar: u.avatar, level: u.level, locale: u.locale,
    dateTimeFormat: u.dateTimeFormat, favoriteInstruments: [...u.favoriteInstruments], marginCall,
    createdAt: iso(u.createdAt), updatedAt: iso(u.updatedAt),
  };
}

/** The auth service's view of a user (sign-up / refresh responses). */
export const AuthUserRecord = Type.Object({
  id: Type.String(),
  role: Type.String(),
  smartAccountAddress: Type.String(),
  wallet: Type.String(),
  createdAt: IsoTime,
  updatedAt: IsoTime,
});
export type AuthUserRecord = Static<typeof AuthUserRecord>;

export function toAuthUser(u: UserRecord): AuthUserRecord {
  return { id: u.id, role: u.role, smartAccountAddress: u.smartAccountAddress, wallet: u.wallet, createdAt: iso(u.createdAt), updatedAt: iso(u.updatedAt) };
}

/** GET /auth/user/me/service: the services of the auth user; this exchange is one, `exchange`. */
export const UserServiceRecord = Type.Object({
  user: Type.String({ description: 'the auth user id' }),
  service: StringEnum(['exchange'] as const),
  createdAt: IsoTime,
}, { description: 'UserService' });
export type UserServiceRecord = Static<typeof UserServiceRecord>;

export function toUserServices(u: UserRecord): UserServiceRecord[] {
  // Every account of this auth API is an exchange account, from its first sign-in on.
  return [{ user: u.id, service: 'exchange', createdAt: iso(u.createdAt) }];
}

export const SessionRecord = Type.Object({
  user: AuthUserRecord,
  token: Type.Object({ accessToken: Type.String(), refreshToken: Type.String() }),
}, { description: 'Session: sign-up and refresh response' });
export type SessionRecord = Static<typeof SessionRecord>;

export function toSession(s: { user: UserRecord; token: TokenPair }): SessionRecord {
  return {
    user: toAuthUser(s.user),
    token: { accessToken: s.token.accessToken, refreshToken: s.token.refreshToken },
  };
}

export const NonceRecord = Type.Object({ nonce: Type.String() });

export const ScopeSchema = StringEnum(SCOPES, {
  description: 'read: account data; trade: orders, positions, TpSl; withdraw: withdrawals; account: profile and API keys',
});

export const ApiKeyWireRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'first characters of the key, for display' }),
  createdAt: IsoTime,
  updatedAt: IsoTime,
  expiresAt: Nullable(IsoTime),
  deletedAt: Nullable(IsoTime),
  scopes: Type.Array(ScopeSchema, { description: 'what requests with this key may do' }),
}, { description: 'API key (the key itself is only returned on create/regenerate)' });
export type ApiKeyWireRecord = Static<typeof ApiKeyWireRecord>;

/** Create/regenerate: the record plus `apiKey`, the secret, shown once (clients read `apiKey`). */
export const ApiKeyCreatedRecord = Type.Object({ ...ApiKeyWireRecord.properties, apiKey: Type.String() });
export type ApiKeyCreatedRecord = Static<typeof ApiKeyCreatedRecord>;

export function toApiKey(k: ApiKeyRecord): ApiKeyWireRecord {
  return {
    id: k.id, name: k.name, prefix: k.prefix, createdAt: iso(k.createdAt), updatedAt: iso(k.updatedAt),
    expiresAt: isoOrNull(k.expiresAt), deletedAt: isoOrNull(k.deletedAt), scopes: [...k.scopes],
  };
}

export function toApiKeyCreated(r: { apiKey: ApiKeyRecord; key: string }): ApiKeyCreatedRecord {
  return { ...toApiKey(r.apiKey), apiKey: r.key };
}
