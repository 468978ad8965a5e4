import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Product } from "../../src/catalogue/Product.ts"
import * as OrderPricing from "../../src/orders/OrderPricing.ts"

const product = (fields: Partial<Product>): Product => ({
  id: "prod_1",
  sku: "PAO-10",
  name: "Pão francês (10 un.)",
  description: null,
  unit_amount: 1290,
  currency: "BRL",
  stock: 5,
  active: true,
  image_url: null,
  url: null,
  attributes: {},
  version: 1,
  created_at: "t0",
  updated_at: "t0",
  ...fields
})

const pao = product({})
const cafe = product({ id: "prod_2", sku: "CAFE-250G", name: "Café 250 g", unit_amount: 1899, stock: null })

const priced = (input: Parameters<typeof OrderPricing.price>[0], products: ReadonlyArray<Product> = [pao, cafe]) =>
  Effect.runSync(OrderPricing.price(input, products))
const refused = (input: Parameters<typeof OrderPricing.price>[0], products: ReadonlyArray<Product> = [pao, cafe]) =>
  Effect.runSync(Effect.flip(OrderPricing.price(input, products))).details

describe("pricing an order", () => {
  it("copies the product's name, sku and price into its lines and adds up in minor units", () => {
    const order = priced({
      items: [
        { product_id: "prod_1", quantity: 2 },
        { sku: "CAFE-250G", quantity: 1 },
        { name: "Gift wrap", unit_amount: 300, quantity: 1 }
      ],
      amount_shipping: 500,
      amount_discount: 100
    })
    assert.deepStrictEqual(order, {
      currency: "BRL",
      items: [
        {
          product_id: "prod_1",
          sku: "PAO-10",
          name: "Pão francês (10 un.)",
          unit_amount: 1290,
          quantity: 2,
          amount_total: 2580
        },
        {
          product_id: "prod_2",
          sku: "CAFE-250G",
          name: "Café 250 g",
          unit_amount: 1899,
          quantity: 1,
          amount_total: 1899
        },
        { product_id: null, sku: null, name: "Gift wrap", unit_amount: 300, quantity: 1, amount_total: 300 }
      ],
      amount_subtotal: 4779,
      amount_shipping: 500,
      amount_discount: 100,
      amount_total: 5179,
      // Café is not tracked (stock null): only the bread takes stock, so only its row is locked.
      moves: [{ productId: "prod_1", quantity: 2 }]
    })
  })

  it("is exact for 0-, 2- and 3-digit currencies", () => {
    const custom = (currency: string, unit_amount: number) =>
      priced({ currency, items: [{ name: "x", unit_amount, quantity: 3 }], amount_shipping: 7, amount_discount: 1 })
        .amount_total
    assert.deepStrictEqual([custom("JPY", 1500), custom("EUR", 1999), custom("KWD", 1250)], [4506, 6003, 3756])
    // 0.1 + 0.2 in decimals would not be 0.3; in minor units it is.
    assert.strictEqual(
      priced({
        currency: "EUR",
        items: [
          { name: "a", unit_amount: 10, quantity: 1 },
          { name: "b", unit_amount: 20, quantity: 1 }
        ]
      }).amount_total,
      30
    )
  })

  it("names the path of a line whose product is not in the account or not active", () => {
    assert.deepStrictEqual(
      refused({
        items: [
          { name: "a", unit_amount: 1, quantity: 1 },
          { product_id: "prod_9", quantity: 1 }
        ]
      }),
      [{ path: "items.1.product_id", message: "no such product in this account" }]
    )
    assert.deepStrictEqual(refused({ items: [{ sku: "PAO-10", quantity: 1 }] }, [product({ active: false })]), [
      { path: "items.0.sku", message: "the product is not active" }
    ])
  })

  it("refuses mixed currencies, a custom-only order without one, and a negative total", () => {
    assert.deepStrictEqual(refused({ currency: "EUR", items: [{ product_id: "prod_1", quantity: 1 }] }), [
      { path: "items.0.product_id", message: "the product is priced in BRL, the order in EUR" }
    ])
    assert.deepStrictEqual(
      refused(
        {
          items: [
            { product_id: "prod_1", quantity: 1 },
            { product_id: "prod_3", quantity: 1 }
          ]
        },
        [pao, product({ id: "prod_3", sku: "USD-1", currency: "USD" })]
      ),
      [{ path: "items.1.product_id", message: "the product is priced in USD, the order in BRL" }]
    )
    assert.deepStrictEqual(refused({ items: [{ name: "a", unit_amount: 1, quantity: 1 }] }), [
      { path: "currency", message: "is required when every line is a custom line" }
    ])
    assert.deepStrictEqual(refused({ items: [{ product_id: "prod_1", quantity: 1 }], amount_discount: 1291 }), [
      { path: "amount_discount", message: "must not be more than the lines and shipping" }
    ])
  })
})
