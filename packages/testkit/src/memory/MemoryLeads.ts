import { Effect, Layer } from "effect"
import { Conflict } from "@leadline/core/Errors"
import type { Lead } from "@leadline/core/leads/Lead"
import { LeadsRepo, phoneTakenMessage } from "@leadline/core/leads/LeadsRepo"
import { onRollback } from "./MemoryTransaction.ts"

interface AccountLeads {
  /** Newest first, the order the list endpoint serves. */
  readonly ordered: Array<Lead>
  readonly byId: Map<string, Lead>
  readonly idByPhone: Map<string, string>
}

const newerFirst = (a: Lead, b: Lead): number =>
  a.created_at === b.created_at ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.created_at < b.created_at ? 1 : -1

/** Index at which `lead` keeps `ordered` sorted; new leads are usually newest, so this is near 0. */
const insertionIndex = (ordered: ReadonlyArray<Lead>, lead: Lead): number => {
  let low = 0
  let high = ordered.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (newerFirst(ordered[mid]!, lead) < 0) low = mid + 1
    else high = mid
  }
  return low
}

export const layer = Layer.sync(LeadsRepo)(() => {
  const accounts = new Map<string, AccountLeads>()
  const of = (accountId: string): AccountLeads => {
    let entry = accounts.get(accountId)
    if (entry === undefined) {
      entry = { ordered: [], byId: new Map(), idByPhone: new Map() }
      accounts.set(accountId, entry)
    }
    return entry
  }

  const put = (entry: AccountLeads, lead: Lead) => {
    entry.ordered.splice(insertionIndex(entry.ordered, lead), 0, lead)
    entry.byId.set(lead.id, lead)
    entry.idByPhone.set(lead.phone, lead.id)
  }
  const drop = (entry: AccountLeads, lead: Lead) => {
    const index = entry.ordered.indexOf(lead)
    if (index >= 0) entry.ordered.splice(index, 1)
    entry.byId.delete(lead.id)
    if (entry.idByPhone.get(lead.phone) === lead.id) entry.idByPhone.delete(lead.phone)
  }

  return LeadsRepo.of({
    insert: (accountId, lead) =>
      Effect.suspend(() => {
        const entry = of(accountId)
        if (entry.idByPhone.has(lead.phone))
          return Effect.fail(new Conflict({ message: phoneTakenMessage(lead.phone) }))
        put(entry, lead)
        return onRollback(() => drop(entry, lead))
      }),
    list: (accountId, page) =>
      Effect.sync(() => {
        const ordered = accounts.get(accountId)?.ordered ?? []
        return { items: ordered.slice(page.offset, page.offset + page.limit), total: ordered.length }
      }),
    find: (accountId, id) => Effect.sync(() => accounts.get(accountId)?.byId.get(id)),
    update: (accountId, lead) =>
      Effect.suspend(() => {
        const entry = of(accountId)
        const before = entry.byId.get(lead.id)
        if (before === undefined) return Effect.succeed(undefined)
        const holder = entry.idByPhone.get(lead.phone)
        if (holder !== undefined && holder !== lead.id) {
          return Effect.fail(new Conflict({ message: phoneTakenMessage(lead.phone) }))
        }
        drop(entry, before)
        put(entry, lead)
        return Effect.as(
          onRollback(() => {
            drop(entry, lead)
            put(entry, before)
          }),
          lead
        )
      }),
    remove: (accountId, id) =>
      Effect.suspend(() => {
        const entry = accounts.get(accountId)
        const lead = entry?.byId.get(id)
        if (entry === undefined || lead === undefined) return Effect.succeed(undefined)
        drop(entry, lead)
        return Effect.as(
          onRollback(() => put(entry, lead)),
          lead
        )
      })
  })
})
