import { useState } from "preact/hooks"
import { HttpApi } from "effect/http-api"
import { AdminApi } from "@leadline/http-adapter/admin/AdminApi"
import { routes } from "../api.ts"
import type { Session } from "../session.ts"
import {
  Empty,
  ErrorText,
  Field,
  Form,
  Listing,
  Loading,
  Page,
  ShownOnce,
  Submit,
  Table,
  useAction,
  useLoad,
  when
} from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(AdminApi))

const PLANS = ["free", "pro", "scale"] as const
type Plan = (typeof PLANS)[number]

const PlanSelect = (props: { value: Plan; onChange: (plan: Plan) => void }) => (
  <select value={props.value} onChange={(event) => props.onChange(event.currentTarget.value as Plan)}>
    {PLANS.map((id) => (
      <option key={id} value={id}>
        {id}
      </option>
    ))}
  </select>
)

/** The operator's accounts: create one (its owner key shown once), open one for its users, keys and plan. */
export const Operator = (props: { session: Extract<Session, { kind: "operator" }> }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const [open, setOpen] = useState<string | undefined>(undefined)
  const list = useLoad(() => call(token, (client) => client.admin.listAccounts({ query: { offset } })), [token, offset])
  const [name, setName] = useState("")
  const [plan, setPlan] = useState<Plan>("free")
  const [ownerKey, setOwnerKey] = useState<string | undefined>(undefined)
  const create = useAction(async () => {
    const created = await call(token, (client) =>
      client.admin.createAccount({ payload: { name: name.trim(), plan_id: plan } })
    )
    setOwnerKey(created.api_key)
    setName("")
    setOffset(0)
    setOpen(created.account_id)
    list.reload()
  })
  return (
    <Page title="Accounts">
      {ownerKey === undefined ? null : (
        <ShownOnce label="The new account's owner key" value={ownerKey} onDone={() => setOwnerKey(undefined)} />
      )}
      <details class="panel" open={list.data?.accounts.length === 0}>
        <summary>Create an account</summary>
        <Form label="Create an account" onSubmit={() => void create.act()}>
          <Field label="Account name">
            <input required maxLength={200} value={name} onInput={(event) => setName(event.currentTarget.value)} />
          </Field>
          <Field label="Plan">
            <PlanSelect value={plan} onChange={setPlan} />
          </Field>
          <ErrorText error={create.error} />
          <Submit busy={create.busy}>Create account</Submit>
        </Form>
      </details>
      {open === undefined ? null : <AccountDetail token={token} id={open} onChanged={list.reload} />}
      <Listing
        loaded={list}
        rows={(data) => data.accounts}
        caption="Accounts"
        noun="accounts"
        empty="No accounts yet."
        onOffset={setOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "Name", cell: (row) => row.name },
          { label: "Plan", cell: (row) => row.plan_id },
          { label: "Created", cell: (row) => when(row.created_at) },
          {
            label: "Actions",
            cell: (row) => (
              <button type="button" onClick={() => setOpen(row.id)} aria-label={`Open ${row.name}`}>
                Open
              </button>
            )
          }
        ]}
      />
    </Page>
  )
}

const AccountDetail = (props: { token: string; id: string; onChanged: () => void }) => {
  const { token, id } = props
  const account = useLoad(
    () => call(token, (client) => client.admin.getAccount({ params: { account_id: id } })),
    [token, id]
  )
  const keys = useLoad(
    () => call(token, (client) => client.admin.listKeys({ params: { account_id: id } })),
    [token, id]
  )
  const [plan, setPlan] = useState<Plan | undefined>(undefined)
  const change = useAction(async () => {
    if (plan === undefined) return
    await call(token, (client) => client.admin.setPlan({ params: { account_id: id }, payload: { plan_id: plan } }))
    account.reload()
    props.onChanged()
  })
  return (
    <section class="panel" aria-label="Account">
      {account.loading && account.data === undefined ? <Loading what="the account" /> : null}
      <ErrorText error={account.error} />
      {account.data === undefined ? null : (
        <>
          <h2>{account.data.name}</h2>
          <dl class="facts">
            <dt>Account id</dt>
            <dd>
              <code>{account.data.id}</code>
            </dd>
            <dt>Plan</dt>
            <dd data-testid="account-plan">{account.data.plan_id}</dd>
            <dt>Messages this month</dt>
            <dd>
              {account.data.usage.messages_used} of {account.data.usage.messages_limit}
            </dd>
          </dl>
          <Form label="Change the plan" onSubmit={() => void change.act()} class="inline-form">
            <Field label="New plan">
              <PlanSelect value={plan ?? account.data.plan_id} onChange={setPlan} />
            </Field>
            <ErrorText error={change.error} />
            <Submit busy={change.busy}>Change plan</Submit>
          </Form>
          <h3>Users</h3>
          <Table
            caption="Users"
            rows={account.data.users}
            rowKey={(row) => row.id}
            columns={[
              { label: "User", cell: (row) => <code>{row.id}</code> },
              { label: "Role", cell: (row) => row.role },
              { label: "Created", cell: (row) => when(row.created_at) }
            ]}
          />
        </>
      )}
      <h3>API keys</h3>
      <ErrorText error={keys.error} />
      {keys.data === undefined ? null : keys.data.keys.length === 0 ? (
        <Empty>No keys.</Empty>
      ) : (
        <Table
          caption="API keys"
          rows={keys.data.keys}
          rowKey={(row) => row.id}
          columns={[
            { label: "Name", cell: (row) => row.name || "(unnamed)" },
            { label: "Key", cell: (row) => <code>{row.prefix}…</code> },
            { label: "Scopes", cell: (row) => (row.scopes.length === 0 ? "full access" : row.scopes.join(", ")) },
            { label: "Status", cell: (row) => (row.revoked_at === null ? "active" : `revoked ${when(row.revoked_at)}`) }
          ]}
        />
      )}
    </section>
  )
}
