import { useState } from "preact/hooks"
import { HttpApi } from "effect/http-api"
import { CatalogueApi } from "@leadline/http-adapter/catalogue/CatalogueApi"
import { idempotencyKey, routes } from "../api.ts"
import type { Session } from "../session.ts"
import { ErrorText, Field, Form, Listing, money, Page, Submit, useAction, useLoad } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(CatalogueApi))

/** The catalogue: products with price and stock; add one. */
export const Products = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const list = useLoad(() => call(token, (client) => client.catalogue.list({ query: { offset } })), [token, offset])
  const [draft, setDraft] = useState({ sku: "", name: "", amount: "", currency: "USD", stock: "" })
  const [formKey, setFormKey] = useState(idempotencyKey)
  const create = useAction(async () => {
    await call(token, (client) =>
      client.catalogue.create({
        payload: {
          sku: draft.sku.trim(),
          name: draft.name.trim(),
          unit_amount: Number(draft.amount),
          currency: draft.currency.trim().toUpperCase(),
          ...(draft.stock.trim() === "" ? {} : { stock: Number(draft.stock) })
        },
        headers: { "idempotency-key": formKey }
      })
    )
    setDraft({ sku: "", name: "", amount: "", currency: draft.currency, stock: "" })
    setFormKey(idempotencyKey())
    list.reload()
  })
  const set = (field: keyof typeof draft) => (event: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [field]: event.currentTarget.value })
  return (
    <Page title="Products">
      <details class="panel">
        <summary>Add a product</summary>
        <Form label="Add a product" onSubmit={() => void create.act()}>
          <Field label="SKU">
            <input required value={draft.sku} onInput={set("sku")} />
          </Field>
          <Field label="Name">
            <input required value={draft.name} onInput={set("name")} />
          </Field>
          <Field label="Price in minor units" hint="Cents for USD: 1999 is $19.99.">
            <input required inputMode="numeric" value={draft.amount} onInput={set("amount")} />
          </Field>
          <Field label="Currency" hint="ISO 4217, e.g. USD, BRL, JPY.">
            <input required maxLength={3} value={draft.currency} onInput={set("currency")} />
          </Field>
          <Field label="Stock" hint="Empty: not tracked.">
            <input inputMode="numeric" value={draft.stock} onInput={set("stock")} />
          </Field>
          <ErrorText error={create.error} />
          <Submit busy={create.busy}>Add product</Submit>
        </Form>
      </details>
      <Listing
        loaded={list}
        rows={(data) => data.products}
        caption="Products"
        noun="products"
        empty="No products yet."
        onOffset={setOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "SKU", cell: (row) => <code>{row.sku}</code> },
          { label: "Name", cell: (row) => row.name },
          { label: "Price", cell: (row) => money(row.unit_amount, row.currency) },
          { label: "Stock", cell: (row) => row.stock ?? "not tracked" },
          { label: "Active", cell: (row) => (row.active ? "yes" : "no") }
        ]}
      />
    </Page>
  )
}
