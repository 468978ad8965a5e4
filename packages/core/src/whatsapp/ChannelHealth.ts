import { Context, Effect, Layer } from "effect"
import {
  type Channel,
  type ChannelHealth as Health,
  type ChannelRestriction,
  campaignHold
} from "../channels/Channel.ts"
import { ChannelsRepo } from "../channels/ChannelsRepo.ts"
import * as ChannelEvents from "../channels/ChannelEvents.ts"
import { CurrentPrincipal } from "../auth/Principal.ts"
import { systemPrincipal } from "../auth/SystemPrincipal.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Versioned from "../Versioned.ts"
import * as Ids from "../Ids.ts"
import { OutboundQueue } from "../messages/OutboundQueue.ts"
import { Transactor } from "../Transactor.ts"
import type { HealthUpdate } from "./InboundBatch.ts"

/** The restriction Leadline records when Meta disables the business account (`DISABLED_UPDATE`). */
export const ACCOUNT_DISABLED = "ACCOUNT_DISABLED"

const digits = (phone: string) => phone.replace(/\D/g, "")

/** The channel's health after one update: what the update names changes, the rest stays. */
export const next = (channel: Health, update: HealthUpdate): Health => {
  const since = update.at.toISOString()
  let restrictions: ReadonlyArray<ChannelRestriction> = channel.restrictions
  if (update.restrictions !== undefined) {
    // ACCOUNT_RESTRICTION says what is restricted now: the list replaces the number's own restrictions.
    const kept = restrictions.filter((r) => r.type === ACCOUNT_DISABLED)
    restrictions = [
      ...kept,
      ...update.restrictions.map((r) => ({
        type: r.type,
        until: r.until === null ? null : r.until.toISOString(),
        since: restrictions.find((old) => old.type === r.type)?.since ?? since
      }))
    ]
  }
  if (update.disabled !== undefined) {
    const others = restrictions.filter((r) => r.type !== ACCOUNT_DISABLED)
    const was = restrictions.find((r) => r.type === ACCOUNT_DISABLED)
    restrictions = update.disabled ? [...others, was ?? { type: ACCOUNT_DISABLED, until: null, since }] : others
  }
  return {
    quality_rating: update.quality ?? channel.quality_rating,
    messaging_limit_tier: update.tier ?? channel.messaging_limit_tier,
    restrictions
  }
}

/** Until when a held channel's campaign messages wait (epoch ms; Infinity: until released), or null: not held. */
const holdUntil = (health: Health, now: string): number | null => {
  const hold = campaignHold(health, now)
  if (hold === undefined) return null
  return hold.until === null ? Number.POSITIVE_INFINITY : Date.parse(hold.until)
}

/**
 * Meta's word on its numbers' health (docs/contract-messaging.md §3.1): the channels of the business
 * account an update names take its quality, limit and restrictions, and a channel that Meta flags
 * or restricts holds its campaigns' messages (replies still go) until it is cleared. One transaction.
 */
export class ChannelHealth extends Context.Service<
  ChannelHealth,
  {
    /** The channels changed, as they are now. */
    readonly apply: (updates: ReadonlyArray<HealthUpdate>) => Effect.Effect<ReadonlyArray<Channel>>
  }
>()("core/ChannelHealth") {
  static readonly layer: Layer.Layer<ChannelHealth, never, ChannelsRepo | OutboundQueue | Transactor | Outbox> =
    Layer.effect(
      ChannelHealth,
      Effect.gen(function* () {
        const channels = yield* ChannelsRepo
        const queue = yield* OutboundQueue
        const transactor = yield* Transactor
        const outbox = yield* Outbox

        const apply = (updates: ReadonlyArray<HealthUpdate>) =>
          updates.length === 0
            ? Effect.succeed([])
            : transactor.withTransaction(
                Effect.gen(function* () {
                  const now = yield* Ids.now
                  const nowMillis = Date.parse(now)
                  const changed = new Map<string, { accountId: string; channel: Channel; before: Channel }>()
                  for (const update of updates) {
                    const owned = yield* channels.byBusinessAccount(update.businessAccountId)
                    for (const { accountId, channel: stored } of owned) {
                      if (update.phoneNumber !== null && digits(stored.display_phone_number) !== update.phoneNumber)
                        continue
                      const key = `${accountId}/${stored.id}`
                      const current = changed.get(key)
                      const health = next(current?.channel ?? stored, update)
                      const saved = yield* channels.setHealth(accountId, stored.id, health, now)
                      if (saved !== undefined)
                        changed.set(key, { accountId, channel: saved, before: current?.before ?? stored })
                    }
                  }
                  for (const { accountId, channel, before } of changed.values()) {
                    const previous = Versioned.previousAttributes(before, channel)
                    if (Object.keys(previous).length > 0) {
                      yield* emit(ChannelEvents.healthChanged, channel, previous).pipe(
                        Effect.provideService(Outbox, outbox),
                        Effect.provideService(CurrentPrincipal, systemPrincipal(accountId, "whatsapp"))
                      )
                    }
                    const until = holdUntil(channel, now)
                    if (until === holdUntil(before, now)) continue
                    yield* queue.holdCampaigns(accountId, channel.id, until, nowMillis)
                    yield* Effect.logInfo(
                      until === null
                        ? `Channel ${channel.id} cleared by Meta: its campaigns' messages released`
                        : `Channel ${channel.id}: ${campaignHold(channel, now)!.message}; its campaigns' messages held`
                    )
                  }
                  return [...changed.values()].map(({ channel }) => channel)
                })
              )

        return ChannelHealth.of({ apply })
      })
    )
}
