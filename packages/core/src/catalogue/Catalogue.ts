import { Context, Effect, Layer } from "effect"
import { authorize, type CurrentPrincipal } from "../auth/Principal.ts"
import {
  type Conflict,
  decodeInput,
  type InvalidInput,
  NotFound,
  type PermissionDenied,
  type PreconditionFailed
} from "../Errors.ts"
import * as Ids from "../Ids.ts"
import * as Pagination from "../Pagination.ts"
import { definedFields } from "../Patch.ts"
import * as Tracing from "../Tracing.ts"
import { Transactor } from "../Transactor.ts"
import * as Versioned from "../Versioned.ts"
import { CreateProduct, type Product, type ProductFilter, UpdateProduct } from "./Product.ts"
import { CatalogueRepo } from "./CatalogueRepo.ts"

type Needs = CurrentPrincipal

/**
 * The catalogue (docs/contract-commerce-ai.md §2): anyone with `catalogue:read` reads it, only a
 * full-access key changes it (`catalogue.manage`). It emits no events: the seed's event types
 * have none for products.
 */
export class Catalogue extends Context.Service<
  Catalogue,
  {
    readonly list: (
      filter: ProductFilter,
      page: Pagination.Page
    ) => Effect.Effect<{ products: ReadonlyArray<Product>; meta: Pagination.Meta }, PermissionDenied, Needs>
    readonly get: (id: string) => Effect.Effect<Product, PermissionDenied | NotFound, Needs>
    readonly create: (input: CreateProduct) => Effect.Effect<Product, PermissionDenied | Conflict | InvalidInput, Needs>
    /** `ifMatch` is the request's `If-Match`: the write applies only to the version it names. */
    readonly update: (
      id: string,
      input: UpdateProduct,
      ifMatch?: string | undefined
    ) => Effect.Effect<Product, PermissionDenied | NotFound | Conflict | InvalidInput | PreconditionFailed, Needs>
    /** Order lines keep their copy of the product's name, SKU and price. */
    readonly remove: (id: string) => Effect.Effect<{ id: string; deleted: true }, PermissionDenied | NotFound, Needs>
  }
>()("core/Catalogue") {
  static readonly layer: Layer.Layer<Catalogue, never, CatalogueRepo | Transactor> = Layer.effect(
    Catalogue,
    Effect.gen(function* () {
      const repo = yield* CatalogueRepo
      const transactor = yield* Transactor
      const notFound = (id: string) => new NotFound({ resource: "product", id })
      const decodeCreate = decodeInput(CreateProduct, "product")
      const decodeUpdate = decodeInput(UpdateProduct, "product")

      const list = Effect.fnUntraced(function* (filter: ProductFilter, page: Pagination.Page) {
        const principal = yield* authorize("catalogue.view")
        const slice = yield* repo.list(principal.accountId, filter, page)
        return { products: slice.items, meta: Pagination.meta(page, slice.total) }
      }, Tracing.span("Catalogue.list"))

      const get = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("catalogue.view")
        return (yield* repo.find(principal.accountId, id)) ?? (yield* notFound(id))
      }, Tracing.span("Catalogue.get"))

      const create = Effect.fnUntraced(function* (raw: CreateProduct) {
        const principal = yield* authorize("catalogue.manage")
        const input = yield* decodeCreate(raw)
        const now = yield* Ids.now
        const product: Product = {
          id: yield* Ids.make("prod"),
          sku: input.sku,
          name: input.name,
          description: input.description ?? null,
          unit_amount: input.unit_amount,
          currency: input.currency,
          stock: input.stock ?? null,
          active: input.active ?? true,
          image_url: input.image_url ?? null,
          url: input.url ?? null,
          attributes: input.attributes ?? {},
          version: 1,
          created_at: now,
          updated_at: now
        }
        yield* repo.insert(principal.accountId, product)
        return product
      }, Tracing.span("Catalogue.create"))

      const update = Effect.fnUntraced(function* (id: string, raw: UpdateProduct, ifMatch?: string) {
        const principal = yield* authorize("catalogue.manage")
        const input = yield* decodeUpdate(raw)
        return yield* transactor.withTransaction(
          Effect.gen(function* () {
            const current = yield* repo.findForUpdate(principal.accountId, id)
            if (current === undefined) return yield* notFound(id)
            yield* Versioned.checkIfMatch(ifMatch, current.version)
            const changed = { ...current, ...definedFields(input) }
            const next = Versioned.advance(current, changed, yield* Ids.now)
            if (next === current) return current
            return (yield* repo.update(principal.accountId, next)) ?? (yield* notFound(id))
          })
        )
      }, Tracing.span("Catalogue.update"))

      const remove = Effect.fnUntraced(function* (id: string) {
        const principal = yield* authorize("catalogue.manage")
        const removed = yield* repo.remove(principal.accountId, id)
        if (removed === undefined) return yield* notFound(id)
        return { id, deleted: true as const }
      }, Tracing.span("Catalogue.remove"))

      return Catalogue.of({ list, get, create, update, remove })
    })
  )
}
