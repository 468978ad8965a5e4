import { HttpApi } from "effect/http-api"
import { LeadsApi } from "@leadline/http-adapter/leads/LeadsApi"
import { ConversationsApi } from "@leadline/http-adapter/conversations/ConversationsApi"
import { OrdersApi } from "@leadline/http-adapter/orders/OrdersApi"
import { routes } from "../api.ts"
import { Link } from "../router.tsx"
import type { Session } from "../session.ts"
import { Empty, ErrorText, Loading, money, Page, Table, useLoad, when } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(LeadsApi).add(ConversationsApi).add(OrdersApi))

/** One lead with what Leadline holds of it: its details, its conversations and its orders. */
export const Lead = (props: { session: Extract<Session, { kind: "account" }>; id: string }) => {
  const { token } = props.session
  const { id } = props
  const lead = useLoad(() => call(token, (client) => client.leads.get({ params: { id } })), [token, id])
  const conversations = useLoad(
    () => call(token, (client) => client.conversations.list({ query: { lead_id: id } })),
    [token, id]
  )
  const orders = useLoad(() => call(token, (client) => client.orders.list({ query: { lead_id: id } })), [token, id])
  const l = lead.data
  return (
    <Page title={l === undefined ? "Lead" : l.name}>
      <p>
        <Link href="/leads">All leads</Link>
      </p>
      {lead.loading && l === undefined ? <Loading what="the lead" /> : null}
      <ErrorText error={lead.error} />
      {l === undefined ? null : (
        <dl class="details">
          <dt>Phone</dt>
          <dd>{l.phone}</dd>
          <dt>Email</dt>
          <dd>{l.email ?? "—"}</dd>
          <dt>Status</dt>
          <dd>{l.status}</dd>
          <dt>Tags</dt>
          <dd>{l.tags.length === 0 ? "—" : l.tags.join(", ")}</dd>
          <dt>Created</dt>
          <dd>{when(l.created_at)}</dd>
        </dl>
      )}
      <h2>Conversations</h2>
      {conversations.loading && conversations.data === undefined ? <Loading what="conversations" /> : null}
      <ErrorText error={conversations.error} />
      {conversations.data === undefined ? null : conversations.data.conversations.length === 0 ? (
        <Empty>No conversations with this lead.</Empty>
      ) : (
        <Table
          caption="The lead's conversations"
          rowKey={(row) => row.id}
          rows={conversations.data.conversations}
          columns={[
            { label: "Status", cell: (row) => row.status },
            { label: "Last message", cell: (row) => row.last_message?.text ?? "—" },
            { label: "When", cell: (row) => when(row.last_message?.created_at ?? row.created_at) },
            { label: "Unread", cell: (row) => row.unread_count },
            {
              label: "Actions",
              cell: (row) => <Link href={`/conversations?open=${encodeURIComponent(row.id)}`}>Open in the inbox</Link>
            }
          ]}
        />
      )}
      <h2>Orders</h2>
      {orders.loading && orders.data === undefined ? <Loading what="orders" /> : null}
      <ErrorText error={orders.error} />
      {orders.data === undefined ? null : orders.data.orders.length === 0 ? (
        <Empty>No orders from this lead.</Empty>
      ) : (
        <Table
          caption="The lead's orders"
          rowKey={(row) => row.id}
          rows={orders.data.orders}
          columns={[
            { label: "Order", cell: (row) => <code>{row.id}</code> },
            { label: "Status", cell: (row) => row.status },
            { label: "Payment", cell: (row) => row.payment_status },
            { label: "Total", cell: (row) => money(row.amount_total, row.currency) },
            { label: "Created", cell: (row) => when(row.created_at) }
          ]}
        />
      )}
    </Page>
  )
}
