import { Layer } from "effect"
import * as Slice from "../Slice.ts"
import * as Products0009 from "./migrations/0009_products.ts"
import * as ProductStockStripes0030 from "./migrations/0030_product_stock_stripes.ts"
import * as SqlCatalogue from "./SqlCatalogue.ts"

/**
 * Products and their stock, which orders take in their own transaction (docs/contract-commerce-ai.md §2);
 * an order's inputs (its lead, its products) read in one statement.
 */
export const slice = Slice.make({
  name: "catalogue",
  layer: Layer.mergeAll(SqlCatalogue.layer, SqlCatalogue.orderInputsLayer),
  migrations: [Products0009.migration, ProductStockStripes0030.migration]
})
