import { useState } from "preact/hooks"
import { EVENT_TYPES, type EventType } from "@leadline/core/EventCatalog"
import { HttpApi } from "effect/http-api"
import { WebhooksApi } from "@leadline/http-adapter/webhooks/WebhooksApi"
import { idempotencyKey, routes } from "../api.ts"
import type { Session } from "../session.ts"
import { ErrorText, Field, Form, Listing, Page, ShownOnce, Submit, useAction, useLoad, when } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(WebhooksApi))

type DeliveryStatus = "pending" | "delivered" | "failed"

/** Endpoints (register with the secret shown once, delete) and the delivery log (filter, redeliver). */
export const Webhooks = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [endpointOffset, setEndpointOffset] = useState(0)
  const endpoints = useLoad(
    () => call(token, (client) => client.webhooks.listEndpoints({ query: { offset: endpointOffset } })),
    [token, endpointOffset]
  )
  const [url, setUrl] = useState("")
  const [description, setDescription] = useState("")
  const [events, setEvents] = useState<ReadonlyArray<EventType>>(["lead.created"])
  const [formKey, setFormKey] = useState(idempotencyKey)
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const register = useAction(async () => {
    const created = await call(token, (client) =>
      client.webhooks.register({
        payload: { url: url.trim(), events, ...(description.trim() === "" ? {} : { description: description.trim() }) },
        headers: { "idempotency-key": formKey }
      })
    )
    setSecret(created.secret)
    setUrl("")
    setDescription("")
    setFormKey(idempotencyKey())
    endpoints.reload()
  })
  const remove = useAction(async (id: string) => {
    await call(token, (client) => client.webhooks.deleteEndpoint({ query: { id } }))
    endpoints.reload()
    deliveries.reload()
  })

  const [endpointFilter, setEndpointFilter] = useState("")
  const [statusFilter, setStatusFilter] = useState<"" | DeliveryStatus>("")
  const [deliveryOffset, setDeliveryOffset] = useState(0)
  const deliveries = useLoad(
    () =>
      call(token, (client) =>
        client.webhooks.listDeliveries({
          query: {
            offset: deliveryOffset,
            ...(endpointFilter === "" ? {} : { endpoint_id: endpointFilter }),
            ...(statusFilter === "" ? {} : { status: statusFilter })
          }
        })
      ),
    [token, deliveryOffset, endpointFilter, statusFilter]
  )
  const redeliver = useAction(async (id: string) => {
    await call(token, (client) => client.webhooks.redeliver({ query: { id } }))
    deliveries.reload()
  })

  return (
    <Page title="Webhooks">
      {secret === undefined ? null : (
        <ShownOnce label="The endpoint's signing secret" value={secret} onDone={() => setSecret(undefined)} />
      )}
      <h2>Endpoints</h2>
      <details class="panel" open={endpoints.data?.endpoints.length === 0}>
        <summary>Register an endpoint</summary>
        <Form label="Register an endpoint" onSubmit={() => void register.act()}>
          <Field label="URL" hint="https, reachable from this server.">
            <input type="url" required value={url} onInput={(event) => setUrl(event.currentTarget.value)} />
          </Field>
          <Field label="Description">
            <input value={description} maxLength={500} onInput={(event) => setDescription(event.currentTarget.value)} />
          </Field>
          <fieldset class="scopes">
            <legend>Events</legend>
            {EVENT_TYPES.map((type) => (
              <label class="choice" key={type}>
                <input
                  type="checkbox"
                  checked={events.includes(type)}
                  onChange={(event) =>
                    setEvents(
                      event.currentTarget.checked ? [...events, type] : events.filter((other) => other !== type)
                    )
                  }
                />
                <code>{type}</code>
              </label>
            ))}
          </fieldset>
          <ErrorText error={register.error} />
          <Submit busy={register.busy}>Register</Submit>
        </Form>
      </details>
      <ErrorText error={remove.error} />
      <Listing
        loaded={endpoints}
        rows={(data) => data.endpoints}
        caption="Webhook endpoints"
        noun="endpoints"
        empty="No endpoints yet: register one to hear about changes."
        onOffset={setEndpointOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "URL", cell: (row) => <span class="wrap">{row.url}</span> },
          { label: "Events", cell: (row) => row.events.join(", ") },
          { label: "Description", cell: (row) => row.description ?? "" },
          { label: "Created", cell: (row) => when(row.created_at) },
          {
            label: "Actions",
            cell: (row) => (
              <span class="actions">
                <button type="button" onClick={() => setEndpointFilter(row.id)}>
                  Show deliveries
                </button>
                <button
                  type="button"
                  class="danger"
                  disabled={remove.busy}
                  onClick={() => {
                    if (confirm(`Delete the endpoint ${row.url}? Its pending deliveries are cancelled.`))
                      void remove.act(row.id)
                  }}
                >
                  Delete
                </button>
              </span>
            )
          }
        ]}
      />

      <h2>Delivery log</h2>
      <div class="filters">
        <Field label="Endpoint">
          <select
            value={endpointFilter}
            onChange={(event) => {
              setDeliveryOffset(0)
              setEndpointFilter(event.currentTarget.value)
            }}
          >
            <option value="">All endpoints</option>
            {(endpoints.data?.endpoints ?? []).map((endpoint) => (
              <option value={endpoint.id} key={endpoint.id}>
                {endpoint.url}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Status">
          <select
            value={statusFilter}
            onChange={(event) => {
              setDeliveryOffset(0)
              setStatusFilter(event.currentTarget.value as "" | DeliveryStatus)
            }}
          >
            <option value="">Any status</option>
            <option value="pending">pending</option>
            <option value="delivered">delivered</option>
            <option value="failed">failed</option>
          </select>
        </Field>
        <button type="button" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      <ErrorText error={redeliver.error} />
      <Listing
        loaded={deliveries}
        rows={(data) => data.deliveries}
        caption="Webhook deliveries"
        noun="deliveries"
        empty="No deliveries match."
        onOffset={setDeliveryOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "Event", cell: (row) => <code>{row.event_type}</code> },
          { label: "Status", cell: (row) => <span class={`status status-${row.status}`}>{row.status}</span> },
          {
            label: "Attempts",
            cell: (row) => (
              <details>
                <summary>
                  {row.attempts.length} attempt{row.attempts.length === 1 ? "" : "s"}
                </summary>
                <ol class="attempts">
                  {row.attempts.map((attempt, index) => (
                    <li key={index}>
                      {when(attempt.attempted_at)}: {attempt.status_code ?? "no answer"}
                      {attempt.error === null ? "" : ` (${attempt.error})`}
                    </li>
                  ))}
                </ol>
              </details>
            )
          },
          { label: "Created", cell: (row) => when(row.created_at) },
          {
            label: "Actions",
            cell: (row) => (
              <button type="button" disabled={redeliver.busy} onClick={() => void redeliver.act(row.id)}>
                Redeliver
              </button>
            )
          }
        ]}
      />
    </Page>
  )
}
