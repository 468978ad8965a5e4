import { Effect, Layer } from "effect"
import * as Calendar from "@leadline/core/metrics/Calendar"
import { Conflict } from "@leadline/core/Errors"
import * as Audience from "@leadline/core/leads/Audience"
import type { Lead } from "@leadline/core/leads/Lead"
import * as LeadSearch from "@leadline/core/leads/LeadSearch"
import { LeadsRepo, phoneTakenMessage } from "@leadline/core/leads/LeadsRepo"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly lead: Lead
}

/** Leads by account: a phone number is unique in its account, and pages are newest first. */
export const layer = Layer.sync(LeadsRepo)(() => {
  const leads = MemoryTable.make({
    primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.lead.id),
    unique: { phone: (row) => MemoryTable.key(row.accountId, row.lead.phone) },
    indexes: { account: (row) => row.accountId },
    order: MemoryTable.newestFirst(
      (row: Row) => row.lead.created_at,
      (row) => row.lead.id
    )
  })
  const matching = (accountId: string, audience: Audience.Audience) =>
    [...leads.scan("account", accountId)].map((row) => row.lead).filter((lead) => Audience.matches(audience, lead))
  const phoneTaken = (lead: Lead) => Effect.fail(new Conflict({ message: phoneTakenMessage(lead.phone) }))

  return LeadsRepo.of({
    insert: (accountId, lead) =>
      Effect.flatMap(
        atomically((tx) => leads.insert(tx, { accountId, lead })),
        (violation) => (violation === undefined ? Effect.void : phoneTaken(lead))
      ),
    search: (accountId, search) =>
      Effect.sync(() =>
        LeadSearch.pageOf(
          [...leads.scan("account", accountId)]
            .map((row) => row.lead)
            .filter((lead) => LeadSearch.matches(lead, search.filter)),
          search
        )
      ),
    total: (accountId) => Effect.sync(() => leads.page("account", accountId, { limit: 1, offset: 0 }).total),
    list: (accountId, page) =>
      Effect.sync(() => {
        const slice = leads.page("account", accountId, page)
        return { items: slice.items.map((row) => row.lead), total: slice.total }
      }),
    find: (accountId, id) => Effect.sync(() => leads.get(MemoryTable.key(accountId, id))?.lead),
    findByIds: (accountId, ids) =>
      Effect.sync(() =>
        ids.flatMap((id) => {
          const row = leads.get(MemoryTable.key(accountId, id))
          return row === undefined ? [] : [row.lead]
        })
      ),
    idsByPhone: (accountId, phones) =>
      Effect.sync(() => {
        const found = new Map<string, string>()
        for (const phone of phones) {
          const row = leads.find("phone", MemoryTable.key(accountId, phone))
          if (row !== undefined) found.set(phone, row.lead.id)
        }
        return found
      }),
    findByPhones: (accountId, phones) =>
      Effect.sync(() =>
        phones.flatMap((phone) => {
          const row = leads.find("phone", MemoryTable.key(accountId, phone))
          return row === undefined ? [] : [row.lead]
        })
      ),
    insertMany: (accountId, many) =>
      atomically((tx) =>
        many.filter((lead) => leads.insert(tx, { accountId, lead }) === undefined).map((lead) => lead.id)
      ),
    updateMany: (accountId, many) =>
      atomically((tx) => {
        for (const lead of many) leads.update(tx, { accountId, lead })
      }),
    update: (accountId, lead) =>
      Effect.flatMap(
        atomically((tx) => leads.update(tx, { accountId, lead })),
        (before) =>
          before instanceof MemoryTable.Violation
            ? phoneTaken(lead)
            : Effect.succeed(before === undefined ? undefined : lead)
      ),
    setMarketingOptOut: (accountId, leadIds, optOut, now) =>
      Effect.gen(function* () {
        const changed: Array<string> = []
        for (const id of leadIds) {
          const lead = leads.get(MemoryTable.key(accountId, id))?.lead
          if (lead === undefined || (lead.marketing_opt_out === null) === (optOut === null)) continue
          const next: Lead = {
            ...lead,
            marketing_opt_out: optOut,
            updated_at: lead.updated_at > now ? lead.updated_at : now
          }
          yield* atomically((tx) => leads.update(tx, { accountId, lead: next }))
          changed.push(id)
        }
        return changed
      }),
    createdPerBucket: (accountId, bounds) =>
      Effect.sync(() =>
        Calendar.countPerBucket(
          bounds,
          Array.from(leads.scan("account", accountId), (row) => Date.parse(row.lead.created_at))
        )
      ),
    statusesOfCreated: (accountId, window) =>
      Effect.sync(() => {
        const counts: Partial<Record<Lead["status"], number>> = {}
        for (const { lead } of leads.scan("account", accountId))
          if (Calendar.bucketOf(window, Date.parse(lead.created_at)) === 0)
            counts[lead.status] = (counts[lead.status] ?? 0) + 1
        return counts
      }),
    audience: (accountId, audience) =>
      Effect.sync(() => matching(accountId, audience).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))),
    audienceCount: (accountId, audience) => Effect.sync(() => matching(accountId, audience).length),
    remove: (accountId, id) => atomically((tx) => leads.remove(tx, MemoryTable.key(accountId, id))?.lead)
  })
})
