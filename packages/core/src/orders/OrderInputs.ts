import { Context, Effect, Layer } from "effect"
import { CatalogueRepo } from "../catalogue/CatalogueRepo.ts"
import type { Product } from "../catalogue/Product.ts"
import { LeadsRepo } from "../leads/LeadsRepo.ts"

/** The products an order's lines name, by id or by SKU. */
export interface ProductKeys {
  readonly ids: ReadonlyArray<string>
  readonly skus: ReadonlyArray<string>
}

/**
 * What an order's create reads before it writes: whether its lead is in the account, and the
 * products its lines name (unlocked). A port of its own so that a store answers both at once: on
 * SQL one statement instead of two, on every order (docs/performance.md, "One hot product").
 */
export class OrderInputs extends Context.Service<
  OrderInputs,
  {
    readonly find: (
      accountId: string,
      leadId: string,
      keys: ProductKeys
    ) => Effect.Effect<{ readonly leadFound: boolean; readonly products: ReadonlyArray<Product> }>
  }
>()("core/OrderInputs") {
  /** Each repository asked in turn: for a store whose reads cost no round trip (memory). */
  static readonly fromRepos: Layer.Layer<OrderInputs, never, LeadsRepo | CatalogueRepo> = Layer.effect(
    OrderInputs,
    Effect.gen(function* () {
      const leads = yield* LeadsRepo
      const catalogue = yield* CatalogueRepo
      return OrderInputs.of({
        find: (accountId, leadId, keys) =>
          Effect.all({
            leadFound: Effect.map(leads.find(accountId, leadId), (lead) => lead !== undefined),
            products: catalogue.findMany(accountId, keys)
          })
      })
    })
  )
}
