import { Array as Arr, Context, Effect, Layer } from "effect"
import type { CurrentPrincipal } from "../auth/Principal.ts"
import { emit, emitAll, Outbox, pending } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import * as MessageEvents from "../messages/MessageEvents.ts"
import { MessagesRepo } from "../messages/MessagesRepo.ts"
import type { Touched } from "../messages/QueueExits.ts"
import { MessageUsage, periodOf } from "../usage/MessageUsage.ts"
import * as CampaignEvents from "./CampaignEvents.ts"
import { next } from "./CampaignState.ts"
import { view } from "./CampaignView.ts"
import { CampaignsRepo, type StoredCampaign } from "./CampaignsRepo.ts"

/** Events of cancelled messages are appended this many at a time: one statement each, of bounded size. */
const EVENT_CHUNK = 1000

/**
 * A campaign's state follows its messages (§8.2, §8.5): `sending` from the first message that
 * leaves the queue, `completed` in the transaction that takes its last one out, `failed` on a
 * template error (the rest cancelled). Called inside the transaction that changed the messages;
 * the campaigns are locked in id order, so it is the last of concurrent changes that sees no
 * queued message left. Only changes that take messages out of the queue come here: delivery
 * and read receipts never touch the campaign row.
 */
export class CampaignProgress extends Context.Service<
  CampaignProgress,
  {
    readonly advance: (
      accountId: string,
      touched: ReadonlyArray<Touched>
    ) => Effect.Effect<void, never, CurrentPrincipal>
    /**
     * Cancels the campaign's messages no sender has begun (in flight ones finish normally), gives
     * their usage back and emits `message.status_changed` for each; how many.
     */
    readonly cancelRemaining: (
      accountId: string,
      campaignId: string,
      now: string
    ) => Effect.Effect<number, never, CurrentPrincipal>
  }
>()("core/CampaignProgress") {
  static readonly layer: Layer.Layer<CampaignProgress, never, CampaignsRepo | MessagesRepo | MessageUsage | Outbox> =
    Layer.effect(
      CampaignProgress,
      Effect.gen(function* () {
        const campaigns = yield* CampaignsRepo
        const messages = yield* MessagesRepo
        const usage = yield* MessageUsage
        const outbox = yield* Outbox

        const cancelRemaining = (accountId: string, campaignId: string, now: string) =>
          Effect.gen(function* () {
            const cancelled = yield* messages.cancelQueued(accountId, campaignId, now)
            const byPeriod = Arr.groupBy(cancelled, (message) => periodOf(message.created_at))
            for (const [period, group] of Object.entries(byPeriod))
              yield* usage.release(accountId, period, group.length)
            for (const chunk of Arr.chunksOf(cancelled, EVENT_CHUNK)) {
              yield* emitAll(chunk.map((message) => pending(MessageEvents.statusChanged, message)))
            }
            return cancelled.length
          }).pipe(Effect.provideService(Outbox, outbox))

        const advance = (accountId: string, touched: ReadonlyArray<Touched>) =>
          Effect.gen(function* () {
            const ids = [...new Set(touched.map((t) => t.campaignId))].sort()
            if (ids.length === 0) return
            const templateErrors = new Map(
              touched.flatMap((t) => (t.templateError === undefined ? [] : [[t.campaignId, t.templateError] as const]))
            )
            const now = yield* Ids.now
            const running: Array<{ campaign: StoredCampaign; changed: boolean }> = []
            for (const campaign of yield* campaigns.findForUpdate(accountId, ids)) {
              const error = templateErrors.get(campaign.id)
              if (error !== undefined && next(campaign.status, { _tag: "Fail" })._tag === "Moved") {
                yield* cancelRemaining(accountId, campaign.id, now)
                yield* campaigns.update(accountId, {
                  ...campaign,
                  status: "failed",
                  error: {
                    code: "template_rejected",
                    message: `WhatsApp refused the template: ${error.message}`,
                    provider_code: error.provider_code
                  },
                  started_at: campaign.started_at ?? now,
                  updated_at: now
                })
                continue
              }
              const started = next(campaign.status, { _tag: "Start" })
              running.push(
                started._tag === "Moved"
                  ? {
                      campaign: { ...campaign, status: started.status, started_at: now, updated_at: now },
                      changed: true
                    }
                  : { campaign, changed: false }
              )
            }
            const stillQueued = yield* messages.campaignsWithQueued(
              accountId,
              running.filter(({ campaign }) => campaign.status === "sending").map(({ campaign }) => campaign.id)
            )
            for (const { campaign, changed } of running) {
              const finished = stillQueued.has(campaign.id) ? undefined : next(campaign.status, { _tag: "Finish" })
              if (finished?._tag === "Moved") {
                const done: StoredCampaign = {
                  ...campaign,
                  status: finished.status,
                  completed_at: now,
                  updated_at: now
                }
                yield* campaigns.update(accountId, done)
                const counts = yield* messages.countsByCampaign(accountId, [done.id])
                yield* emit(CampaignEvents.completed, view(done, null, counts.get(done.id) ?? {}, null)).pipe(
                  Effect.provideService(Outbox, outbox)
                )
              } else if (changed) yield* campaigns.update(accountId, campaign)
            }
          })

        return CampaignProgress.of({ advance, cancelRemaining })
      })
    )
}
