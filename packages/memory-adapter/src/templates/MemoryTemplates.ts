import { Effect, Layer } from "effect"
import type { MessageTemplate } from "@leadline/core/templates/Template"
import { TemplatesRepo } from "@leadline/core/templates/TemplatesRepo"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically, type Tx } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly template: MessageTemplate
}

interface Sync {
  readonly accountId: string
  readonly businessAccountId: string
  readonly syncedAt: string | null
  readonly claimedUntil: string | null
}

const byNameAndLanguage = (a: MessageTemplate, b: MessageTemplate) =>
  a.name.localeCompare(b.name) ||
  a.language.localeCompare(b.language) ||
  a.business_account_id.localeCompare(b.business_account_id)

/** Templates per account and WABA, unique by name and language; and each WABA's sync state. */
export const layer = Layer.sync(TemplatesRepo)(() => {
  const templates = MemoryTable.make({
    primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.template.id),
    unique: {
      named: (row) =>
        MemoryTable.key(row.accountId, row.template.business_account_id, row.template.name, row.template.language)
    },
    indexes: {
      account: (row) => row.accountId,
      waba: (row) => MemoryTable.key(row.accountId, row.template.business_account_id),
      meta: (row) =>
        row.template.external_id === null
          ? undefined
          : MemoryTable.key(row.template.business_account_id, row.template.external_id)
    }
  })
  const syncs = MemoryTable.make({ primaryKey: (row: Sync) => MemoryTable.key(row.accountId, row.businessAccountId) })
  const ofWaba = (accountId: string, waba: string) =>
    [...templates.scan("waba", MemoryTable.key(accountId, waba))].map((row) => row.template).sort(byNameAndLanguage)
  const putSync = (tx: Tx, sync: Sync) => {
    if (syncs.get(MemoryTable.key(sync.accountId, sync.businessAccountId)) === undefined) syncs.insert(tx, sync)
    else syncs.update(tx, sync)
  }
  return TemplatesRepo.of({
    list: (accountId, filter, page) =>
      Effect.sync(() => {
        const matching = [...templates.scan("account", accountId)]
          .map((row) => row.template)
          .filter(
            (t) =>
              (filter.status === undefined || t.status === filter.status) &&
              (filter.name === undefined || t.name === filter.name) &&
              (filter.business_account_id === undefined || t.business_account_id === filter.business_account_id)
          )
          .sort(byNameAndLanguage)
        return { items: matching.slice(page.offset, page.offset + page.limit), total: matching.length }
      }),
    find: (accountId, id) => Effect.sync(() => templates.get(MemoryTable.key(accountId, id))?.template),
    ofBusinessAccount: (accountId, waba) =>
      Effect.sync(() => ({
        templates: ofWaba(accountId, waba),
        syncedAt: syncs.get(MemoryTable.key(accountId, waba))?.syncedAt ?? null
      })),
    replace: (accountId, waba, list, now) =>
      atomically((tx) => {
        for (const row of [...templates.scan("waba", MemoryTable.key(accountId, waba))]) {
          templates.remove(tx, MemoryTable.key(accountId, row.template.id))
        }
        for (const template of list) templates.insert(tx, { accountId, template })
        const before = syncs.get(MemoryTable.key(accountId, waba))
        putSync(tx, { accountId, businessAccountId: waba, syncedAt: now, claimedUntil: before?.claimedUntil ?? null })
      }),
    insert: (accountId, template) => atomically((tx) => templates.insert(tx, { accountId, template }) === undefined),
    recordCreated: (accountId, id, created, now) =>
      atomically((tx) => {
        const row = templates.get(MemoryTable.key(accountId, id))
        if (row === undefined) return
        const t = row.template
        templates.update(tx, {
          ...row,
          template: {
            ...t,
            external_id: created.externalId,
            category: created.category,
            status: t.status === "PENDING" ? created.status : t.status,
            updated_at: now
          }
        })
      }),
    remove: (accountId, ids) =>
      atomically((tx) => {
        for (const id of ids) {
          templates.remove(tx, MemoryTable.key(accountId, id))
        }
      }),
    applyUpdate: (update, now) =>
      atomically((tx) => {
        const byName =
          update.name === undefined || update.language === undefined
            ? []
            : [...templates.rows()].filter(
                (row) =>
                  row.template.business_account_id === update.businessAccountId &&
                  row.template.external_id === null &&
                  row.template.name === update.name &&
                  row.template.language === update.language
              )
        const rows = [
          ...templates.scan("meta", MemoryTable.key(update.businessAccountId, update.externalId)),
          ...byName
        ]
        return rows.map((row) => {
          const before = row.template
          const after: MessageTemplate = {
            ...before,
            status: update.status ?? before.status,
            rejected_reason: update.status === undefined ? before.rejected_reason : (update.rejectedReason ?? null),
            quality: update.quality ?? before.quality,
            category: update.category ?? before.category,
            updated_at: now
          }
          templates.update(tx, { ...row, template: after })
          return { accountId: row.accountId, before, after }
        })
      }),
    claimSync: (accountId, waba, now, until) =>
      atomically((tx) => {
        const before = syncs.get(MemoryTable.key(accountId, waba))
        if (before?.claimedUntil != null && before.claimedUntil > now) return false
        putSync(tx, { accountId, businessAccountId: waba, syncedAt: before?.syncedAt ?? null, claimedUntil: until })
        return true
      }),
    releaseSync: (accountId, waba) =>
      atomically((tx) => {
        const before = syncs.get(MemoryTable.key(accountId, waba))
        if (before !== undefined) syncs.update(tx, { ...before, claimedUntil: null })
      })
  })
})
