import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { CreateProduct, DeletedProduct, Product, UpdateProduct } from "@leadline/core/catalogue/Product"
import { Meta, PageQueryFields } from "@leadline/core/Pagination"
import { Id, Text } from "@leadline/core/Text"
import { Authentication } from "../Authentication.ts"
import * as Idempotent from "../Idempotent.ts"
import { IfMatchHeaders } from "../Preconditions.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Conflict, Forbidden, NotFound, PreconditionFailed, ValidationError } from "../WireErrors.ts"

export const ProductList = Schema.Struct({ products: Schema.Array(Product), meta: Meta }).annotate({
  identifier: "ProductList"
})

const ProductId = { id: Id.annotate({ description: "A product id, `prod_…`" }) }
const MANAGE = "Needs a full-access key (no scope grants `catalogue.manage`)."
const ETAG = 'Answers with `ETag: "<version>"`.'

export class CatalogueApi extends HttpApiGroup.make("catalogue")
  .add(
    HttpApiEndpoint.get("list", "/", {
      query: {
        ...PageQueryFields,
        active: Schema.optional(Schema.Literals(["true", "false"])).annotate({
          description: "Only active (`true`) or inactive (`false`) products"
        }),
        sku: Schema.optional(Text).annotate({ description: "The product with this SKU" }),
        q: Schema.optional(Text).annotate({ description: "Case-insensitive, in the name or the SKU" })
      },
      success: ProductList,
      error: Forbidden
    }).annotateMerge(
      OpenApi.annotations({ summary: "List products", description: "Newest first. Needs `catalogue:read`." })
    ),
    Idempotent.create("create", "/", {
      payload: CreateProduct,
      success: Product,
      error: [Forbidden, ValidationError, Conflict]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Create a product",
        description: `\`unit_amount\` is an integer count of the currency's minor unit (1290 is 12.90 BRL; 9.99 is a 400); \`currency\` is ISO 4217, any case in, upper-case out. \`stock\` null (the default) is not tracked. The SKU is unique in the account (409 \`conflict\`). ${ETAG} ${MANAGE}`
      })
    ),
    HttpApiEndpoint.get("get", "/:id", {
      params: ProductId,
      success: Product,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({ summary: "Get a product", description: `${ETAG} Needs \`catalogue:read\`.` })
    ),
    HttpApiEndpoint.patch("update", "/:id", {
      params: ProductId,
      headers: IfMatchHeaders,
      payload: UpdateProduct,
      success: Product,
      error: [Forbidden, NotFound, ValidationError, Conflict, PreconditionFailed]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Change a product",
        description: `Any field of the create. With \`If-Match\`, only if the product is still at that version (412 \`precondition_failed\` otherwise). A change moves \`version\` by one; a PATCH that changes nothing keeps it. Orders already placed keep their copy of the name, SKU and price. ${ETAG} ${MANAGE}`
      })
    ),
    HttpApiEndpoint.delete("delete", "/:id", {
      params: ProductId,
      success: DeletedProduct,
      error: [Forbidden, NotFound]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Delete a product",
        description: `Order lines keep their copy of the product. ${MANAGE}`
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/catalogue/products")
  .annotateMerge(
    OpenApi.annotations({
      title: "Catalogue",
      description: "Products with prices in minor units and optional stock (docs/contract-commerce-ai.md §2)."
    })
  ) {}
