import { Schema } from "effect"
import { Amount, Currency } from "../money/Money.ts"
import { JsonObject, Text } from "../Text.ts"

/** docs/contract-commerce-ai.md §2: a product of the account's catalogue. */
export const Product = Schema.Struct({
  id: Schema.String.annotate({ description: "`prod_` followed by a sortable id" }),
  sku: Schema.String.annotate({ description: "Unique in the account; WhatsApp's `product_retailer_id`" }),
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  unit_amount: Schema.Number.annotate({ description: "Price in the currency's minor unit (cents)" }),
  currency: Schema.String.annotate({ description: "ISO 4217, upper-case" }),
  stock: Schema.NullOr(Schema.Number).annotate({
    description: "Units left; null when stock is not tracked (never runs out)"
  }),
  active: Schema.Boolean.annotate({ description: "Only active products can be ordered" }),
  image_url: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  attributes: Schema.Record(Schema.String, Schema.Unknown),
  version: Schema.Number.annotate({ description: 'Starts at 1, +1 on every change; the ETag is `"<version>"`' }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "Product" })
export type Product = typeof Product.Type

export const SKU_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/

export const Sku = Schema.String.check(
  Schema.makeFilter(
    (sku: string) =>
      SKU_PATTERN.test(sku) ||
      "sku must be 1 to 100 characters: letters, digits, '.', '_' or '-', not starting with a symbol"
  )
)

const Name = Text.check(
  Schema.isMinLength(1, { message: "name must not be empty" }),
  Schema.isMaxLength(200, { message: "name must be at most 200 characters" })
)

const Description = Text.check(Schema.isMaxLength(9999, { message: "description must be at most 9999 characters" }))

const Stock = Schema.Number.check(
  Schema.makeFilter(
    (n: number) =>
      (Number.isInteger(n) && n >= 0 && n <= 1_000_000_000) || "stock must be an integer from 0 to 1000000000"
  )
)

const HttpsUrl = Text.check(
  Schema.makeFilter((text: string) => {
    if (text.length > 2048) return "must be at most 2048 characters"
    try {
      return new URL(text).protocol === "https:" || "must be an https URL"
    } catch {
      return "must be an https URL"
    }
  })
)

const settable = {
  description: Schema.optional(Schema.NullOr(Description)),
  stock: Schema.optional(Schema.NullOr(Stock)),
  active: Schema.optional(Schema.Boolean),
  image_url: Schema.optional(Schema.NullOr(HttpsUrl)),
  url: Schema.optional(Schema.NullOr(HttpsUrl)),
  attributes: Schema.optional(JsonObject("attributes"))
}

export const CreateProduct = Schema.Struct({
  sku: Sku,
  name: Name,
  unit_amount: Amount,
  currency: Currency,
  ...settable
}).annotate({ identifier: "CreateProduct" })
export type CreateProduct = typeof CreateProduct.Type

export const UpdateProduct = Schema.Struct({
  sku: Schema.optional(Sku),
  name: Schema.optional(Name),
  unit_amount: Schema.optional(Amount),
  currency: Schema.optional(Currency),
  ...settable
}).annotate({ identifier: "UpdateProduct" })
export type UpdateProduct = typeof UpdateProduct.Type

/** The list's filters (docs/contract-commerce-ai.md §2). */
export interface ProductFilter {
  readonly active?: boolean | undefined
  readonly sku?: string | undefined
  /** Case-insensitive, in the name or the SKU. */
  readonly q?: string | undefined
}

export const matches = (filter: ProductFilter, product: Product): boolean =>
  (filter.active === undefined || product.active === filter.active) &&
  (filter.sku === undefined || product.sku === filter.sku) &&
  (filter.q === undefined ||
    product.name.toLowerCase().includes(filter.q.toLowerCase()) ||
    product.sku.toLowerCase().includes(filter.q.toLowerCase()))

/** Meta's `availability`, derived: `in stock` when active and stock is untracked or above 0. */
export const isAvailable = (product: Product): boolean =>
  product.active && (product.stock === null || product.stock > 0)

export const DeletedProduct = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotate({
  identifier: "DeletedProduct"
})

export const skuTakenMessage = (sku: string) => `A product with sku ${sku} already exists`
