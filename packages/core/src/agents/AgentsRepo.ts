import { Context, type Effect } from "effect"
import type { Listed, Page } from "../Pagination.ts"
import type { Agent } from "./Agent.ts"

/** Agent storage, scoped to one account. */
export class AgentsRepo extends Context.Service<
  AgentsRepo,
  {
    /**
     * Serialises the agent writes of one account until the caller's transaction ends, so that the
     * checks across agents (a unique name, one enabled agent per channel) see every other write.
     */
    readonly lockAccount: (accountId: string) => Effect.Effect<void>
    /** Every agent of the account (a handful: the cross-agent checks read them all). */
    readonly all: (accountId: string) => Effect.Effect<ReadonlyArray<Agent>>
    /** Newest first. */
    readonly list: (accountId: string, page: Page) => Effect.Effect<Listed<Agent>>
    readonly find: (accountId: string, id: string) => Effect.Effect<Agent | undefined>
    readonly insert: (accountId: string, agent: Agent) => Effect.Effect<void>
    readonly update: (accountId: string, agent: Agent) => Effect.Effect<void>
    /** Returns the agent as it was; undefined when it is not in the account. */
    readonly remove: (accountId: string, id: string) => Effect.Effect<Agent | undefined>
    /** The enabled agent of a channel, if any (live replies). */
    readonly enabledOn: (accountId: string, channel: string) => Effect.Effect<Agent | undefined>
  }
>()("core/AgentsRepo") {}
