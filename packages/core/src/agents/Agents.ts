import { Context, Effect, Layer } from "effect"
import { authorize, authorizeFullAccess, type CurrentPrincipal } from "../auth/Principal.ts"
import {
  Conflict,
  decodeInput,
  InvalidInput,
  NotFound,
  type PermissionDenied,
  type PreconditionFailed
} from "../Errors.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import { KnowledgeRepo } from "../knowledge/KnowledgeRepo.ts"
import * as Pagination from "../Pagination.ts"
import * as Tracing from "../Tracing.ts"
import { Transactor } from "../Transactor.ts"
import * as Versioned from "../Versioned.ts"
import {
  type Agent,
  applied,
  CreateAgent,
  channelTakenMessage,
  DEFAULTS,
  nameTakenMessage,
  UpdateAgent
} from "./Agent.ts"
import * as AgentEvents from "./AgentEvents.ts"
import { AgentsRepo } from "./AgentsRepo.ts"

type Needs = CurrentPrincipal

/**
 * AI agents (docs/contract-commerce-ai.md §5): their configuration, versioned, with a unique name per
 * account, at most one enabled agent per channel and knowledge sources of the account only;
 * `agent.config_changed` on every change.
 */
export class Agents extends Context.Service<
  Agents,
  {
    readonly list: (
      page: Pagination.Page
    ) => Effect.Effect<{ agents: ReadonlyArray<Agent>; meta: Pagination.Meta }, PermissionDenied, Needs>
    readonly get: (id: string) => Effect.Effect<Agent, PermissionDenied | NotFound, Needs>
    readonly create: (input: CreateAgent) => Effect.Effect<Agent, PermissionDenied | InvalidInput | Conflict, Needs>
    /** `ifMatch` is the request's `If-Match`: the write applies only to the version it names. */
    readonly update: (
      id: string,
      input: UpdateAgent,
      ifMatch?: string | undefined
    ) => Effect.Effect<Agent, PermissionDenied | NotFound | InvalidInput | Conflict | PreconditionFailed, Needs>
    readonly remove: (id: string) => Effect.Effect<{ id: string; deleted: true }, PermissionDenied | NotFound, Needs>
  }
>()("core/Agents") {
  static readonly layer: Layer.Layer<Agents, never, AgentsRepo | KnowledgeRepo | Transactor | Outbox> = Layer.effect(
    Agents,
    Effect.gen(function* () {
      const repo = yield* AgentsRepo
      const knowledge = yield* KnowledgeRepo
      const transactor = yield* Transactor
      const outbox = yield* Outbox
      const withOutbox = Effect.provideService(Outbox, outbox)
      const notFound = (id: string) => new NotFound({ resource: "agent", id })
      const decodeCreate = decodeInput(CreateAgent, "agent")
      const decodeUpdate = decodeInput(UpdateAgent, "agent")

      /** The rules across agents and sources, checked with the account's agent writes serialised. */
      const checked = Effect.fnUntraced(function* (accountId: string, agent: Agent, before: Agent | undefined) {
        const others = (yield* repo.all(accountId)).filter((other) => other.id !== agent.id)
        if (others.some((other) => other.name === agent.name)) {
          return yield* new Conflict({ message: nameTakenMessage(agent.name) })
        }
        if (agent.enabled) {
          for (const channel of agent.channels) {
            const holder = others.find((other) => other.enabled && other.channels.includes(channel))
            if (holder !== undefined) return yield* new Conflict({ message: channelTakenMessage(channel, holder) })
          }
        }
        const kept = new Set(before?.knowledge_source_ids ?? [])
        const asked = agent.knowledge_source_ids.filter((id) => !kept.has(id))
        const existing = new Set(yield* knowledge.existing(accountId, asked))
        const details = agent.knowledge_source_ids.flatMap((id, index) =>
          kept.has(id) || existing.has(id)
            ? []
            : [{ path: `knowledge_source_ids.${index}`, message: "no such knowledge source in this account" }]
        )
        if (details.length > 0) {
          return yield* new InvalidInput({
            message: `Invalid request body: ${details[0]!.path}: ${details[0]!.message}`,
            details
          })
        }
      })

      const list = Effect.fnUntraced(function* (page: Pagination.Page) {
        const principal = yield* authorize("agents.view")
        const slice = yield* repo.list(principal.accountId, page)
        return { agents: slice.items, meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Agents.list"))

      const get = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("agents.view")
        return (yield* repo.find(principal.accountId, id)) ?? (yield* notFound(id))
      }, Tracing.span("Agents.get"))

      const create = Effect.fnUntraced(function* (raw: CreateAgent) {
        const principal = yield* authorize("agents.create")
        const input = yield* decodeCreate(raw)
        const now = yield* Ids.now
        const agent = applied(
          { id: yield* Ids.make("agt"), name: input.name, ...DEFAULTS, version: 1, created_at: now, updated_at: now },
          input
        )
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            yield* repo.lockAccount(principal.accountId)
            yield* checked(principal.accountId, agent, undefined)
            yield* repo.insert(principal.accountId, agent)
            yield* emit(AgentEvents.configChanged, agent).pipe(withOutbox)
            return agent
          })
        )
      }, Tracing.span("Agents.create"))

      const update = Effect.fnUntraced(function* (id: string, raw: UpdateAgent, ifMatch?: string) {
        const principal = yield* authorize("agents.update")
        const input = yield* decodeUpdate(raw)
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            yield* repo.lockAccount(principal.accountId)
            const current = yield* repo.find(principal.accountId, id)
            if (current === undefined) return yield* notFound(id)
            yield* Versioned.checkIfMatch(ifMatch, current.version)
            const next = Versioned.advance(current, applied(current, input), yield* Ids.now)
            if (next === current) return current
            yield* checked(principal.accountId, next, current)
            yield* repo.update(principal.accountId, next)
            yield* emit(AgentEvents.configChanged, next, Versioned.previousAttributes(current, next)).pipe(withOutbox)
            return next
          })
        )
      }, Tracing.span("Agents.update"))

      const remove = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorizeFullAccess
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            const removed = yield* repo.remove(principal.accountId, id)
            if (removed === undefined) return yield* notFound(id)
            yield* emit(AgentEvents.configChanged, { ...removed, deleted: true as const }).pipe(withOutbox)
            return { id, deleted: true as const }
          })
        )
      }, Tracing.span("Agents.remove"))

      return Agents.of({ list, get, create, update, remove })
    })
  )
}

/**
 * Drops a deleted knowledge source from every agent of the account that named it, each such agent
 * a new version with its `agent.config_changed` (docs/contract-commerce-ai.md §4). Run it in the
 * deletion's transaction. An agent whose list this empties answers from every source, as `[]` means.
 */
export const forgetSource = (
  accountId: string,
  sourceId: string
): Effect.Effect<void, never, AgentsRepo | Outbox | CurrentPrincipal> =>
  Effect.gen(function* () {
    const repo = yield* AgentsRepo
    yield* repo.lockAccount(accountId)
    const now = yield* Ids.now
    for (const agent of yield* repo.all(accountId)) {
      if (!agent.knowledge_source_ids.includes(sourceId)) continue
      const next = Versioned.advance(
        agent,
        { ...agent, knowledge_source_ids: agent.knowledge_source_ids.filter((id) => id !== sourceId) },
        now
      )
      yield* repo.update(accountId, next)
      yield* emit(AgentEvents.configChanged, next, Versioned.previousAttributes(agent, next))
    }
  })
