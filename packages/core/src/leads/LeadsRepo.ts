import { Context, type Effect } from "effect"
import type { Conflict } from "../Errors.ts"
import type { Listed, Page } from "../Pagination.ts"
import type { Audience } from "./Audience.ts"
import type { LeadPage, LeadSearch } from "./LeadSearch.ts"
import type { Bounds } from "../metrics/Calendar.ts"
import type { Lead, LeadStatus, MarketingOptOut } from "./Lead.ts"

/** Lead storage, always scoped to one account. Phone numbers are unique per account. */
export class LeadsRepo extends Context.Service<
  LeadsRepo,
  {
    readonly insert: (accountId: string, lead: Lead) => Effect.Effect<void, Conflict>
    /** Newest first: `created_at` desc, then `id` desc. */
    readonly list: (accountId: string, page: Page) => Effect.Effect<Listed<Lead>>
    /** A page of a search (`LeadSearch`): its filter, order and window, as `LeadSearch.pageOf` says. */
    readonly search: (accountId: string, search: LeadSearch) => Effect.Effect<LeadPage>
    /** How many leads the account has (kept as a count: it does not grow with the account). */
    readonly total: (accountId: string) => Effect.Effect<number>
    readonly find: (accountId: string, id: string) => Effect.Effect<Lead | undefined>
    /** The leads with these ids (a page of conversations' leads), in no particular order; unknown ids are left out. */
    readonly findByIds: (accountId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Lead>>
    /** The ids of the leads with these E.164 phones: phone → lead id. */
    readonly idsByPhone: (
      accountId: string,
      phones: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, string>>
    /** The leads with these E.164 phones (an import's rows), in no particular order. */
    readonly findByPhones: (accountId: string, phones: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Lead>>
    /**
     * Inserts many leads at once (an import's chunk), skipping those whose phone a lead has: the ids
     * of those inserted come back. The account's count moves by the number inserted.
     */
    readonly insertMany: (accountId: string, leads: ReadonlyArray<Lead>) => Effect.Effect<ReadonlyArray<string>>
    /** Writes many leads at once by id (an import's or a bulk change's chunk), phones unchanged. */
    readonly updateMany: (accountId: string, leads: ReadonlyArray<Lead>) => Effect.Effect<void>
    /** Replaces the stored lead; undefined when it is not in the account. */
    readonly update: (accountId: string, lead: Lead) => Effect.Effect<Lead | undefined, Conflict>
    /**
     * Opts these leads out of marketing (`optOut`), or back in (`null`), where that changes them: a
     * lead opted out already keeps its first opt-out. `updated_at` moves on the leads changed, whose ids come back.
     */
    readonly setMarketingOptOut: (
      accountId: string,
      leadIds: ReadonlyArray<string>,
      optOut: MarketingOptOut | null,
      now: string
    ) => Effect.Effect<ReadonlyArray<string>>
    /** The leads a campaign's audience matches now (`Audience.matches`), in id order. */
    readonly audience: (accountId: string, audience: Audience) => Effect.Effect<ReadonlyArray<Lead>>
    /** How many leads the audience matches now. */
    readonly audienceCount: (accountId: string, audience: Audience) => Effect.Effect<number>
    /** How many leads were created in each bucket of the bounds (`Calendar.Bounds`). */
    readonly createdPerBucket: (accountId: string, bounds: Bounds) => Effect.Effect<ReadonlyArray<number>>
    /** The leads created in the window, counted by their status now; statuses with none may be left out. */
    readonly statusesOfCreated: (
      accountId: string,
      window: Bounds
    ) => Effect.Effect<Readonly<Partial<Record<LeadStatus, number>>>>
    /** Removes the lead and returns it as it was; undefined when it is not in the account. */
    readonly remove: (accountId: string, id: string) => Effect.Effect<Lead | undefined>
  }
>()("core/LeadsRepo") {}

export const phoneTakenMessage = (phone: string) => `A lead with phone ${phone} already exists`
