/**
 * Users and profiles: user search, own-profile edits, favourites, sign-up checks, smart-account
 * validation and public profiles. Storage: src/accounts (profile columns of the auth users table).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AccountServices, ProfilePatch } from '../../accounts/index.js';
import {
  ProfileBalanceChartRecord, DelegateListRecord, PublicProfileRecord, SignUpCheckRecord, SignUpQuotaRecord, SmartAccountValidationRecord,
  UserImageStateRecord, UserListRecord, toPositionHistoryItem, toPublicUser, toProfileStatistics,
} from '../records/accounts.js';
import { EmptyResponse, ErrorBody, Nullable, iso, num } from '../../records/common.js';
import { UserWireRecord, toUser } from '../records/user.js';
import { DAY_MS } from '../../store/exchange-statistics.js';
import { userOf } from '../authenticate.js';
import type { RouteContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { Body, Instrument, Offset } from '../schemas.js';

const errors = { '4xx': ErrorBody };
const tags = ['user'];
const UUID = '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$';
const Uuid = Type.String({ pattern: UUID, description: 'uuid' });
const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: '0x-prefixed 20-byte address' });
/** Printable text without control characters. */
const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '^[^\\u0000-\\u001f\\u007f]+$' });

const profileFields = {
  name: Type.Optional(Nullable(Text(64))),
  email: Type.Optional(Nullable(Type.String({ maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', description: 'e-mail address' }))),
  avatar: Type.Optional(Nullable(Type.String({ maxLength: 2048, pattern: '^https://[^\\s]+$', description: 'https URL of the image' }))),
  locale: Type.Optional(Type.String({ pattern: '^[a-z]{2}(-[A-Z]{2})?$', description: 'e.g. en, de-CH' })),
  dateTimeFormat: Type.Optional(Text(64)),
  social: Type.Optional(Type.Array(Body({ type: Type.String({ pattern: '^[a-z0-9_-]{1,32}$' }), value: Text(256) }), { maxItems: 10 })),
};
const UpdateUserBody = Type.Object(profileFields, { additionalProperties: false, minProperties: 1, description: 'UpdateUserBody: the profile fields to change (null clears)' });
const CreateAccountBody = Body(profileFields, 'CreateAccountBody: optional initial profile fields');
const UserIdParams = Type.Object({ userId: Uuid });
const UserListQuery = Type.Object({
  authId: Type.Optional(Uuid),
  search: Type.Optional(Type.String({ minLength: 3, maxLength: 64, description: 'at least 3 characters; matches name (substring) or wallet (prefix)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Offset),
});
const FavoriteBody = Body({ favorite: Type.Boolean() }, 'favorite: true adds the instrument to favoriteInstruments, false removes it');
const ValidateSmartAccountsBody = Body({ addresses: Type.Array(Address, { minItems: 1, maxItems: 100 }) }, 'ValidateSmartAccountsBody');

/** Public profiles show this many days of balance and this many closed positions. */
const PROFILE_CHART_DAYS = 30;
const PROFILE_HISTORY = 20;

const forbidden = (message: string) => new ApiError(403, 'FORBIDDEN', message);

export function profileRoutes(ctx: RouteContext, accounts: AccountServices) {
  const { profiles } = accounts;
  const currentUser = async (id: string) => {
    const u = await ctx.auth.getUserById(id);
    if (!u) throw notFound('USER_NOT_FOUND', 'User not found');
    return toUser(u, ctx.engine.account(u.exchangeId).marginCall);
  };
  const applyProfile = async (userId: string, patch: ProfilePatch) => {
    if (!(await profiles.updateProfile(userId, patch, ctx.clock()))) throw notFound('USER_NOT_FOUND', 'User not found');
  };

  return async function plugin(app: FastifyInstance) {
    app.get('/api/user/list', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Search users (public fields only)', querystring: UserListQuery, response: { 200: UserListRecord, ...errors } },
    }, async (req) => {
      const q = req.query as Static<typeof UserListQuery>;
      const r = await profiles.search({ authId: q.authId?.toLowerCase(), search: q.search, limit: q.limit ?? 20, offset: q.offset ?? 0 });
      return { list: r.list.map(toPublicUser), count: r.count };
    });

    app.put('/api/user/:userId', {
      config: { auth: true, scope: 'account' },
      schema: {
        tags, summary: 'Edit your own profile', params: UserIdParams, body: UpdateUserBody,
        response: { 200: UserWireRecord, ...errors },
      },
    }, async (req) => {
      const me = userOf(req);
      const { userId } = req.params as Static<typeof UserIdParams>;
      if (userId.toLowerCase() !== me.id.toLowerCase()) throw forbidden('You can only edit your own profile');
      await applyProfile(me.id, req.body as ProfilePatch);
      return currentUser(me.id);
    });

    app.post('/api/user/account', {
      config: { auth: true, scope: 'account' },
      schema: {
        tags, summary: 'Complete your account (the account itself exists from the first sign-in)',
        body: CreateAccountBody, response: { 200: UserWireRecord, ...errors },
      },
      // The body is optional: no body at all means no fields.
      preValidation: async (req) => {
        if (req.body === undefined) req.body = {};
      },
    }, async (req) => {
      const me = userOf(req);
      const patch = (req.body ?? {}) as ProfilePatch;
      if (Object.keys(patch).length > 0) await applyProfile(me.id, patch);
      return currentUser(me.id);
    });

    app.get('/api/user/sign-up/:wallet/check', {
      schema: { tags, summary: 'Whether a wallet already has an account', params: Type.Object({ wallet: Address }), response: { 200: SignUpCheckRecord, ...errors } },
    }, async (req) => {
      const { wallet } = req.params as { wallet: string };
      return { wallet, registered: await profiles.isRegisteredWallet(wallet) };
    });

    app.get('/api/user/sign-up/quota', {
      schema: { tags, summary: 'Sign-up quota (this exchange sets none)', response: { 200: SignUpQuotaRecord, ...errors } },
    }, async () => ({ registered: await profiles.userCount(), limit: null, available: null }));

    app.get('/api/user/image/check', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Whether your profile has an image', response: { 200: UserImageStateRecord, ...errors } },
    }, async (req) => {
      const me = await ctx.auth.getUserById(userOf(req).id);
      const avatar = me?.avatar ?? null;
      return { hasImage: avatar !== null, avatar };
    });

    app.get('/api/user/oct/delegate', {
      config: { auth: true, scope: 'read' },
      schema: { tags, summary: 'Your token delegations (none exist on this exchange)', response: { 200: DelegateListRecord, ...errors } },
    }, async () => ({ list: [], count: 0 }));

    app.post('/api/smart-account/validate', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags: ['smart-account'], summary: 'Which addresses are smart accounts of registered users',
        body: ValidateSmartAccountsBody, response: { 200: SmartAccountValidationRecord, ...errors },
      },
    }, async (req) => {
      const { addresses } = req.body as Static<typeof ValidateSmartAccountsBody>;
      return { list: await Promise.all(addresses.map(async (address) => ({ address, valid: await profiles.isKnownSmartAccount(address) }))) };
    });

    app.get('/api/public/:authId/profile', {
      config: { auth: true, scope: 'read' },
      schema: {
        tags, summary: "A user's public profile: trading statistics, 30-day balance chart, last closed positions",
        params: Type.Object({ authId: Uuid }), response: { 200: PublicProfileRecord, ...errors },
      },
    }, async (req) => {
      const { authId } = req.params as { authId: string };
      const user = await profiles.findByAuthId(authId.toLowerCase());
      if (!user) throw notFound('USER_NOT_FOUND', 'No user with this authId');
      const today = Math.floor(ctx.clock() / DAY_MS);
      const [summary, balances, history] = await Promise.all([
        accounts.userHistory.tradingSummary(user.exchangeId),
        accounts.userHistory.dailyBalances(user.exchangeId, today - PROFILE_CHART_DAYS + 1, today),
        accounts.queries.positionHistory(user.exchangeId, { sort: 'close-at-desc', limit: PROFILE_HISTORY }),
      ]);
      return {
        id: user.id,
        authId: user.authId,
        name: user.name,
        avatar: user.avatar,
        statistics: toProfileStatistics(summary),
        chart: { list: balances.map((b) => ({ date: iso(b.day * DAY_MS), balance: num(b.balance) })) } satisfies Static<typeof ProfileBalanceChartRecord>,
        positionHistory: history.list.map(toPositionHistoryItem),
        updatedAt: iso(ctx.clock()),
      };
    });

    app.put('/api/pair/:pairId/favorite', {
      config: { auth: true, scope: 'account' },
      schema: {
        tags, summary: 'Add or remove a favourite instrument (reflected in favoriteInstruments)',
        params: Type.Object({ pairId: Instrument }), body: FavoriteBody, response: { 200: EmptyResponse, ...errors },
      },
    }, async (req) => {
      const { pairId } = req.params as { pairId: string };
      const { favorite } = req.body as Static<typeof FavoriteBody>;
      if (!ctx.engine.instrumentConfig(pairId)) throw notFound('INSTRUMENT_NOT_FOUND', `Unknown instrument ${pairId}`);
      if (!(await profiles.setFavorite(userOf(req).id, pairId, favorite, ctx.clock()))) throw notFound('USER_NOT_FOUND', 'User not found');
      return {};
    });
  };
}
