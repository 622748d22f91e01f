/**
 * Wire records of the user-facing extras the spec leaves "not shown": user list, public profile, trade
 * signals, mobile-app blocked versions and OAuth. Designed here, documented through these schemas.
 */
import { Type, type Static } from '@sinclair/typebox';
import { SIDES } from '../../domain/enums.js';

import type { PublicUser } from '../../accounts/profiles.js';
import type { TradeSignal } from '../../accounts/trade-signals.js';
import type { BlockedVersion } from '../../accounts/mobile-app.js';
import { BLOCK_TYPES, PLATFORMS } from '../../accounts/mobile-app.js';
import type { PositionHistoryView } from '../../store/types.js';
import type { UserTradingSummary } from '../../store/user-history.js';
import { IsoTime, Nullable, StringEnum, iso, num } from '../../records/common.js';

// ---- users ----

export const PublicUserRecord = Type.Object({
  id: Type.String(),
  authId: Type.String(),
  name: Nullable(Type.String()),
  avatar: Nullable(Type.String()),
  level: Type.Integer(),
  wallet: Type.String(),
  createdAt: IsoTime,
}, { description: 'What any signed-in user may see of another user (no email, social, favourites or balances)' });
export type PublicUserRecord = Static<typeof PublicUserRecord>;

export function toPublicUser(u: PublicUser): PublicUserRecord {
  return { id: u.id, authId: u.authId, name: u.name, avatar: u.avatar, level: u.level, wallet: u.wallet, createdAt: iso(u.createdAt) };
}

export const UserListRecord = Type.Object({ list: Type.Array(PublicUserRecord), count: Type.Integer() }, { description: 'UserList' });

export const SignUpCheckRecord = Type.Object({
  wallet: Type.String(),
  registered: Type.Boolean({ description: 'the wallet has signed in before' }),
}, { description: 'CheckSignUpBadgeResponse' });

export const SignUpQuotaRecord = Type.Object({
  registered: Type.Integer({ description: 'accounts created so far' }),
  limit: Nullable(Type.Integer({ description: 'maximum number of accounts; null = no quota' })),
  available: Nullable(Type.Integer({ description: 'sign-ups left; null = unlimited' })),
}, { description: 'SignUpQuotaResponse' });

export const UserImageStateRecord = Type.Object({
  hasImage: Type.Boolean(),
  avatar: Nullable(Type.String()),
}, { description: 'UserImageStateResponse' });

export const DelegateListRecord = Type.Object({
  list: Type.Array(Type.Object({ address: Type.String(), amount: Type.Number(), createdAt: IsoTime })),
  count: Type.Integer(),
}, { description: 'DelegateList: token delegations of the user (this exchange has no delegation source, so it is empty)' });

export const SmartAccountValidationRecord = Type.Object({
  list: Type.Array(Type.Object({ address: Type.String(), valid: Type.Boolean({ description: 'the smart account of a registered user' }) })),
}, { description: 'ValidateSmartAccountsResponse' });

// ---- public profile ----

export const ProfileStatisticsRecord = Type.Object({
  positionsClosed: Type.Integer(),
  positionsOpen: Type.Integer(),
  wins: Type.Integer(),
  losses: Type.Integer(),
  winRate: Type.Number({ description: 'wins / closed positions (0 when none)' }),
  realizedPnL: Type.Number(),
  fees: Type.Number(),
  fundingPaid: Type.Number(),
  tradingVolume: Type.Number({ description: 'Σ entry + exit value of all positions' }),
}, { description: 'UserStatisticsResponse (public profile part)' });
export type ProfileStatisticsRecord = Static<typeof ProfileStatisticsRecord>;

export function toProfileStatistics(s: UserTradingSummary): ProfileStatisticsRecord {
  return {
    positionsClosed: s.positionsClosed, positionsOpen: s.positionsOpen, wins: s.wins, losses: s.losses,
    winRate: s.positionsClosed === 0 ? 0 : Math.round((s.wins / s.positionsClosed) * 1e4) / 1e4,
    realizedPnL: num(s.realizedPnL), fees: num(s.fees), fundingPaid: num(s.fundingPaid), tradingVolume: num(s.tradingVolume),
  };
}

export const ProfileBalanceChartRecord = Type.Object({
  list: Type.Array(Type.Object({ date: IsoTime, balance: Type.Number() })),
}, { description: 'BalanceChart: collateral balance at the end of each UTC day, oldest first' });

export const PositionHistoryItemRecord = Type.Object({
  id: Type.String(),
  instrument: Type.String(),
  side: StringEnum(SIDES),
  maxQuantity: Type.Number(),
  avgEntryPrice: Type.Number(),
  avgExitPrice: Type.Number(),
  realizedPnL: Type.Number(),
  fee: Type.Number(),
  fundingPaid: Type.Number(),
  closeType: Type.String(),
  openAt: IsoTime,
  closeAt: IsoTime,
}, { description: 'PositionHistoryFillObject (closed position lifetime)' });
export type PositionHistoryItemRecord = Static<typeof PositionHistoryItemRecord>;

export function toPositionHistoryItem(p: PositionHistoryView): PositionHistoryItemRecord {
  return {
    id: p.id, instrument: p.instrument, side: p.side, maxQuantity: num(p.maxQuantity), avgEntryPrice: num(p.avgEntryPrice),
    avgExitPrice: num(p.avgExitPrice), realizedPnL: num(p.realizedPnL), fee: num(p.fee), fundingPaid: num(p.fundingPaid),
    closeType: p.closeType, openAt: iso(p.openAt), closeAt: iso(p.closeAt),
  };
}

export const PublicProfileRecord = Type.Object({
  id: Type.String({ description: 'user id' }),
  authId: Type.String(),
  name: Type.Optional(Nullable(Type.String())),
  avatar: Type.Optional(Nullable(Type.String())),
  statistics: Type.Optional(ProfileStatisticsRecord),
  chart: Type.Optional(ProfileBalanceChartRecord),
  positionHistory: Type.Optional(Type.Array(PositionHistoryItemRecord)),
  updatedAt: IsoTime,
}, { description: 'Public profile' });

// ---- trade signals ----

export const TradeSignalRecord = Type.Object({
  id: Type.String(),
  user: Type.String({ description: "author's user id" }),
  instrument: Type.String(),
  side: StringEnum(SIDES),
  entryPrice: Type.Number(),
  takeProfit: Nullable(Type.Number()),
  stopLoss: Nullable(Type.Number()),
  leverage: Type.Integer(),
  comment: Type.String(),
  createdAt: IsoTime,
}, { description: 'TradeSignalItem' });
export type TradeSignalRecord = Static<typeof TradeSignalRecord>;

export function toTradeSignal(s: TradeSignal): TradeSignalRecord {
  return {
    id: s.id, user: s.userId, instrument: s.instrument, side: s.side, entryPrice: num(s.entryPrice),
    takeProfit: s.takeProfit === null ? null : num(s.takeProfit), stopLoss: s.stopLoss === null ? null : num(s.stopLoss),
    leverage: s.leverage, comment: s.comment, createdAt: iso(s.createdAt),
  };
}

export const TradeSignalWithUserRecord = Type.Object({
  ...TradeSignalRecord.properties,
  author: Type.Object({ authId: Type.String(), name: Nullable(Type.String()), avatar: Nullable(Type.String()) }),
}, { description: 'TradeSignalItemWithUser (the author as shown publicly)' });

export const TradeSignalListRecord = Type.Object({ list: Type.Array(TradeSignalRecord), count: Type.Integer() }, { description: 'TradeSignalListResponse' });

// ---- mobile app ----

export const BlockedVersionRecord = Type.Object({
  id: Type.String(),
  platform: StringEnum(PLATFORMS),
  versionMin: Nullable(Type.String()),
  versionMax: Nullable(Type.String()),
  blockType: StringEnum(BLOCK_TYPES, { description: '"0" inactive, "1" soft block (may continue), "2" hard block' }),
  blockMessage: Type.String(),
  blockHead: Type.String(),
  blockButton: Type.String(),
  blockButtonLink: Type.String(),
  createdAt: IsoTime,
  updatedAt: IsoTime,
}, { description: 'Blocked version rule (versions inclusive; null = unbounded)' });
export type BlockedVersionRecord = Static<typeof BlockedVersionRecord>;

export function toBlockedVersion(b: BlockedVersion): BlockedVersionRecord {
  return { ...b, createdAt: iso(b.createdAt), updatedAt: iso(b.updatedAt) };
}

export const VersionCheckRecord = Type.Object({
  platform: StringEnum(PLATFORMS),
  version: Type.String(),
  blocked: Type.Boolean({ description: 'a rule with blockType 1 or 2 covers this version' }),
  rule: Nullable(BlockedVersionRecord),
}, { description: 'Whether an app version is blocked' });

