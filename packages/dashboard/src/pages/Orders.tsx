import { useState } from "preact/hooks"
import { HttpApi } from "effect/http-api"
import { OrdersApi } from "@leadline/http-adapter/orders/OrdersApi"
import { routes } from "../api.ts"
import { Link } from "../router.tsx"
import type { Session } from "../session.ts"
import { Listing, money, Page, useLoad, when } from "../ui.tsx"
import { OrderNotices } from "./OrderNotices.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(OrdersApi))

/** Orders, newest first, with their two states and totals; the account's status notices. */
export const Orders = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const list = useLoad(() => call(token, (client) => client.orders.list({ query: { offset } })), [token, offset])
  return (
    <Page title="Orders">
      <OrderNotices token={token} />
      <Listing
        loaded={list}
        rows={(data) => data.orders}
        caption="Orders"
        noun="orders"
        empty="No orders yet."
        onOffset={setOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "Order", cell: (row) => <code>{row.id}</code> },
          { label: "Lead", cell: (row) => <Link href={`/leads/${row.lead_id}`}>{row.lead_id}</Link> },
          { label: "Status", cell: (row) => row.status },
          { label: "Payment", cell: (row) => row.payment_status },
          { label: "Items", cell: (row) => row.items.length },
          { label: "Total", cell: (row) => money(row.amount_total, row.currency) },
          { label: "Created", cell: (row) => when(row.created_at) }
        ]}
      />
    </Page>
  )
}
