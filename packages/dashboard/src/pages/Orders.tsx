import { useState } from "preact/hooks"
import { call } from "../api.ts"
import type { Session } from "../session.ts"
import { Empty, ErrorText, Loading, money, Page, Pager, Table, useLoad, when } from "../ui.tsx"

/** Orders, newest first, with their two states and totals. */
export const Orders = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const list = useLoad(() => call(token, (client) => client.orders.list({ query: { offset } })), [token, offset])
  return (
    <Page title="Orders">
      {list.loading && list.data === undefined ? <Loading what="orders" /> : null}
      <ErrorText error={list.error} />
      {list.data === undefined ? null : list.data.orders.length === 0 ? (
        <Empty>No orders yet.</Empty>
      ) : (
        <>
          <Table
            caption="Orders"
            rows={list.data.orders}
            rowKey={(row) => row.id}
            columns={[
              { label: "Order", cell: (row) => <code>{row.id}</code> },
              { label: "Lead", cell: (row) => <code>{row.lead_id}</code> },
              { label: "Status", cell: (row) => row.status },
              { label: "Payment", cell: (row) => row.payment_status },
              { label: "Items", cell: (row) => row.items.length },
              { label: "Total", cell: (row) => money(row.amount_total, row.currency) },
              { label: "Created", cell: (row) => when(row.created_at) }
            ]}
          />
          <Pager meta={list.data.meta} onOffset={setOffset} noun="orders" />
        </>
      )}
    </Page>
  )
}
