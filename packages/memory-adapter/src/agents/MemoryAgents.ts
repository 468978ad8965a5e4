import { Effect, Layer } from "effect"
import type { Agent } from "@leadline/core/agents/Agent"
import { AgentsRepo } from "@leadline/core/agents/AgentsRepo"
import * as MemoryLocks from "../MemoryLocks.ts"
import * as MemoryTable from "../MemoryTable.ts"
import { atomically } from "../MemoryTransaction.ts"

interface Row {
  readonly accountId: string
  readonly agent: Agent
}

/** Agents by account; `lockAccount` serialises one account's agent writes as SQL's advisory lock does. */
export const layer = Layer.sync(AgentsRepo)(() => {
  const agents = MemoryTable.make({
    primaryKey: (row: Row) => MemoryTable.key(row.accountId, row.agent.id),
    indexes: { account: (row) => row.accountId },
    order: MemoryTable.newestFirst(
      (row: Row) => row.agent.created_at,
      (row) => row.agent.id
    )
  })
  const locks = MemoryLocks.make()
  const ofAccount = (accountId: string) => [...agents.scan("account", accountId)].map((row) => row.agent)

  return AgentsRepo.of({
    lockAccount: (accountId) => locks.lock(`agents\u0000${accountId}`),
    all: (accountId) => Effect.sync(() => ofAccount(accountId).sort((a, b) => (a.id < b.id ? -1 : 1))),
    list: (accountId, page) =>
      Effect.sync(() => {
        const slice = agents.page("account", accountId, page)
        return { items: slice.items.map((row) => row.agent), total: slice.total }
      }),
    find: (accountId, id) => Effect.sync(() => agents.get(MemoryTable.key(accountId, id))?.agent),
    insert: (accountId, agent) => atomically((tx) => void agents.insert(tx, { accountId, agent })),
    update: (accountId, agent) => atomically((tx) => void agents.update(tx, { accountId, agent })),
    remove: (accountId, id) => atomically((tx) => agents.remove(tx, MemoryTable.key(accountId, id))?.agent),
    enabledOn: (accountId, channel) =>
      Effect.sync(() =>
        ofAccount(accountId)
          .sort((a, b) => (a.id < b.id ? -1 : 1))
          .find((agent) => agent.enabled && (agent.channels as ReadonlyArray<string>).includes(channel))
      )
  })
})
