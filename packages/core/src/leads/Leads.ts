import { Context, Effect, Layer, Schema } from "effect"
import { AccountsRepo } from "../accounts/AccountsRepo.ts"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import {
  type Conflict,
  decodeInput,
  type InvalidInput,
  invalidField,
  NotFound,
  type PermissionDenied,
  unknownAssignee
} from "../Errors.ts"
import { emit, Outbox } from "../events/Outbox.ts"
import * as Ids from "../Ids.ts"
import * as Pagination from "../Pagination.ts"
import * as LeadSearch from "./LeadSearch.ts"
import { type LeadListMeta, LeadListQuery } from "./LeadSearch.ts"
import { Transactor } from "../Transactor.ts"
import * as NewLead from "./Lead.ts"
import { CreateLead, type Lead, UpdateLead } from "./Lead.ts"
import * as LeadEvents from "./LeadEvents.ts"
import { LeadsRepo } from "./LeadsRepo.ts"
import * as Tracing from "../Tracing.ts"
import * as Versioned from "../Versioned.ts"
import { LeadRemoval } from "./LeadRemoval.ts"

type Needs = CurrentPrincipal

export class Leads extends Context.Service<
  Leads,
  {
    /**
     * A page of the account's leads: searched, filtered and sorted as `query` asks, by offset or
     * by cursor (docs/contract.md, "Finding leads").
     */
    readonly list: (
      query?: LeadListQuery
    ) => Effect.Effect<{ leads: ReadonlyArray<Lead>; meta: LeadListMeta }, PermissionDenied | InvalidInput, Needs>
    readonly get: (id: string) => Effect.Effect<Lead, PermissionDenied | NotFound, Needs>
    readonly create: (input: CreateLead) => Effect.Effect<Lead, PermissionDenied | Conflict | InvalidInput, Needs>
    readonly update: (
      id: string,
      input: UpdateLead
    ) => Effect.Effect<Lead, PermissionDenied | NotFound | Conflict | InvalidInput, Needs>
    readonly remove: (id: string) => Effect.Effect<{ id: string; deleted: true }, PermissionDenied | NotFound, Needs>
  }
>()("core/Leads") {
  static readonly layer: Layer.Layer<Leads, never, LeadsRepo | AccountsRepo | Transactor | Outbox | LeadRemoval> =
    Layer.effect(
      Leads,
      Effect.gen(function* () {
        const repo = yield* LeadsRepo
        const accounts = yield* AccountsRepo
        const transactor = yield* Transactor
        const removal = yield* LeadRemoval
        const outbox = yield* Outbox
        // One service, not a context: merging a context copies every service of the request's.
        const withOutbox = Effect.provideService(Outbox, outbox)

        const notFound = (id: string) => new NotFound({ resource: "lead", id })

        const checkAssignee = Effect.fnUntraced(function* (accountId: string, userId: string | null | undefined) {
          if (userId === null || userId === undefined) return
          if ((yield* accounts.findUser(accountId, userId)) === undefined) {
            return yield* unknownAssignee()
          }
        })

        const decodeQuery = decodeInput(Schema.toType(LeadListQuery), "query")

        const list = Effect.fnUntraced(function* (raw: LeadListQuery = {}) {
          const principal = yield* authorize("leads.view")
          const query = yield* decodeQuery(raw)
          const accountId = principal.accountId
          const page = Pagination.page(query)
          const filter = LeadSearch.filterOf(query)
          if (query.offset !== undefined && (query.starting_after ?? query.ending_before) !== undefined) {
            return yield* invalidField("offset", "a page is asked by offset or by cursor, not both", "query")
          }
          if (query.starting_after !== undefined && query.ending_before !== undefined) {
            return yield* invalidField(
              "ending_before",
              "starting_after and ending_before cannot be used together",
              "query"
            )
          }
          const filtered = LeadSearch.isFiltered(filter)
          // The first ask of every client, newest first by offset and unfiltered, keeps its one-statement path.
          if (
            !filtered &&
            query.sort === undefined &&
            query.starting_after === undefined &&
            query.ending_before === undefined
          ) {
            const slice = yield* repo.list(accountId, page)
            return { leads: slice.items, meta: LeadSearch.offsetMeta(page, slice.total, slice.items) }
          }
          const cursor = query.starting_after ?? query.ending_before
          const anchor = cursor === undefined ? undefined : yield* repo.find(accountId, cursor)
          if (cursor !== undefined && anchor === undefined) {
            const parameter = query.starting_after !== undefined ? "starting_after" : "ending_before"
            return yield* invalidField(parameter, "no such lead in this account", "query")
          }
          const search: LeadSearch.LeadSearch = {
            filter,
            order: LeadSearch.orderOf(query.sort),
            window:
              anchor === undefined
                ? { by: "offset", offset: page.offset }
                : { by: query.starting_after !== undefined ? "after" : "before", anchor },
            limit: page.limit
          }
          const [found, total] = yield* Effect.all(
            [repo.search(accountId, search), filtered ? Effect.succeed(null) : repo.total(accountId)],
            { concurrency: "unbounded" }
          )
          return { leads: found.items, meta: LeadSearch.metaOf(search, found, total) }
        }, Tracing.span("Leads.list"))

        const get = Effect.fnUntraced(function* (id: string) {
          const principal = yield* authorize("leads.view")
          const lead = yield* repo.find(principal.accountId, id)
          return lead ?? (yield* notFound(id))
        }, Tracing.span("Leads.get"))

        const decodeCreate = decodeInput(CreateLead, "lead")
        const decodeUpdate = decodeInput(UpdateLead, "lead")

        const create = Effect.fnUntraced(function* (raw: CreateLead) {
          const principal = yield* authorize("leads.create")
          const input = yield* decodeCreate(raw)
          if (input.assigned_user_id != null) yield* authorize("leads.assign")
          yield* checkAssignee(principal.accountId, input.assigned_user_id)
          const lead = NewLead.fromInput(yield* Ids.make("ld"), input, yield* Ids.now)
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              yield* repo.insert(principal.accountId, lead)
              yield* emit(LeadEvents.created, lead).pipe(withOutbox)
              return lead
            })
          )
        }, Tracing.span("Leads.create"))

        const update = Effect.fnUntraced(function* (id: string, raw: UpdateLead) {
          const principal = yield* authorize("leads.update")
          const input = yield* decodeUpdate(raw)
          if (input.assigned_user_id !== undefined) yield* authorize("leads.assign")
          yield* checkAssignee(principal.accountId, input.assigned_user_id)
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              const current = yield* repo.find(principal.accountId, id)
              if (current === undefined) return yield* notFound(id)
              const next = NewLead.withChanges(current, input, yield* Ids.now)
              const updated = yield* repo.update(principal.accountId, next)
              if (updated === undefined) return yield* notFound(id)
              const previous = Versioned.previousAttributes(current, updated)
              // A PATCH that changes nothing is not a change: no event.
              if (Object.keys(previous).length > 0) yield* emit(LeadEvents.updated, updated, previous).pipe(withOutbox)
              return updated
            })
          )
        }, Tracing.span("Leads.update"))

        const remove = Effect.fnUntraced(function* (id: string) {
          const principal = yield* authorize("leads.delete")
          return yield* transactor.withTransaction(
            Effect.gen(function* () {
              // What hangs off the lead in the resources above goes first, in this transaction (LeadRemoval).
              yield* removal.run({ accountId: principal.accountId, leadId: id })
              const removed = yield* repo.remove(principal.accountId, id)
              if (removed === undefined) return yield* notFound(id)
              yield* emit(LeadEvents.deleted, removed).pipe(withOutbox)
              return { id, deleted: true as const }
            })
          )
        }, Tracing.span("Leads.remove"))

        return Leads.of({ list, get, create, update, remove })
      })
    )
}
