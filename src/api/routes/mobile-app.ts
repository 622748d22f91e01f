/**
 * Mobile app version rules: operators block version ranges per platform; apps ask whether their own
 * version is blocked (public).
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { BLOCK_TYPES, MobileAppError, PLATFORMS, type BlockedVersionPatch } from '../../accounts/mobile-app.js';
import type { AccountServices } from '../../accounts/index.js';
import { BlockedVersionRecord, VersionCheckRecord, toBlockedVersion } from '../records/accounts.js';
import { ErrorBody, Nullable, StringEnum } from '../../records/common.js';
import { requireAdmin, type OperatorGuard } from '../admin-guard.js';
import type { RouteContext } from '../context.js';
import { ApiError, badRequest } from '../errors.js';
import { Body } from '../schemas.js';

const errors = { '4xx': ErrorBody };
const tags = ['mobile-app'];
const Version = Type.String({ minLength: 5, maxLength: 64, description: 'semantic version, e.g. 1.4.0' });
const Text = Type.String({ maxLength: 1000 });
const BlockedVersionBody = Body({
  platform: Type.Optional(StringEnum(PLATFORMS)),
  versionMin: Type.Optional(Nullable(Version)),
  versionMax: Type.Optional(Nullable(Version)),
  blockType: Type.Optional(StringEnum(BLOCK_TYPES)),
  blockMessage: Type.Optional(Text),
  blockHead: Type.Optional(Type.String({ maxLength: 200 })),
  blockButton: Type.Optional(Type.String({ maxLength: 100 })),
  blockButtonLink: Type.Optional(Type.String({ maxLength: 2048 })),
}, 'Creates the rule (platform required) or changes the given fields; versions are semver, inclusive, null = unbounded');
const IdParams = Type.Object({
  id: Type.String({ pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$', description: 'uuid' }),
});
const CheckQuery = Type.Object({ platform: StringEnum(PLATFORMS), version: Version });


function mapError(e: unknown): never {
  if (e instanceof MobileAppError) throw badRequest(e.code, e.message);
  throw e;
}

export function mobileAppRoutes(ctx: RouteContext, accounts: AccountServices, guard: OperatorGuard = requireAdmin) {
  const { blockedVersions } = accounts;
  return async function plugin(app: FastifyInstance) {
    app.put('/api/mobile-app/blocked-version/:id', {
      config: { auth: true, scope: 'wallet-session' },
      schema: {
        tags, summary: 'Create or change a blocked-version rule (operators only)',
        params: IdParams, body: BlockedVersionBody, response: { 200: BlockedVersionRecord, ...errors },
      },
      preValidation: async (req) => guard(req),
    }, async (req) => {
      const { id } = req.params as Static<typeof IdParams>;
      try {
        return toBlockedVersion(await blockedVersions.put(id.toLowerCase(), req.body as BlockedVersionPatch, ctx.clock()));
      } catch (e) {
        mapError(e);
      }
    });

    app.get('/api/mobile-app/blocked-version', {
      schema: { tags, summary: 'Whether an app version is blocked on a platform (public)', querystring: CheckQuery, response: { 200: VersionCheckRecord, ...errors } },
    }, async (req) => {
      const q = req.query as Static<typeof CheckQuery>;
      try {
        const rule = await blockedVersions.check(q.platform, q.version);
        return { platform: q.platform, version: q.version, blocked: rule !== undefined, rule: rule ? toBlockedVersion(rule) : null };
      } catch (e) {
        mapError(e);
      }
    });
  };
}
