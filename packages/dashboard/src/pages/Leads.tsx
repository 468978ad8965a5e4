import { useState } from "preact/hooks"
import { HttpApi } from "effect/http-api"
import { LeadsApi } from "@leadline/http-adapter/leads/LeadsApi"
import { idempotencyKey, routes } from "../api.ts"
import { Link } from "../router.tsx"
import type { Session } from "../session.ts"
import { ErrorText, Field, Form, Listing, Page, Submit, useAction, useLoad, when } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(LeadsApi))

const STATUSES = ["new", "contacted", "qualified", "won", "lost"] as const
type Status = (typeof STATUSES)[number]

interface Draft {
  name: string
  phone: string
  email: string
  tags: string
  status: Status
}

const blank: Draft = { name: "", phone: "", email: "", tags: "", status: "new" }

const tagsOf = (text: string) =>
  text
    .split(",")
    .map((tag) => tag.trim())
    .filter((tag) => tag !== "")

const LeadFields = (props: { draft: Draft; onChange: (draft: Draft) => void }) => {
  const set = (field: keyof Draft) => (event: { currentTarget: { value: string } }) =>
    props.onChange({ ...props.draft, [field]: event.currentTarget.value })
  return (
    <>
      <Field label="Name">
        <input required maxLength={200} value={props.draft.name} onInput={set("name")} />
      </Field>
      <Field label="Phone" hint="With the country code, e.g. +14155550100.">
        <input required type="tel" value={props.draft.phone} onInput={set("phone")} />
      </Field>
      <Field label="Email">
        <input type="email" value={props.draft.email} onInput={set("email")} />
      </Field>
      <Field label="Tags" hint="Separated by commas.">
        <input value={props.draft.tags} onInput={set("tags")} />
      </Field>
      <Field label="Status">
        <select value={props.draft.status} onChange={set("status")}>
          {STATUSES.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </Field>
    </>
  )
}

/** Leads, newest first, a page at a time: create, edit, delete. */
export const Leads = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const list = useLoad(() => call(token, (client) => client.leads.list({ query: { offset } })), [token, offset])
  const [draft, setDraft] = useState<Draft>(blank)
  const [formKey, setFormKey] = useState(idempotencyKey)
  const create = useAction(async () => {
    await call(token, (client) =>
      client.leads.create({
        payload: {
          name: draft.name.trim(),
          phone: draft.phone.trim(),
          ...(draft.email.trim() === "" ? {} : { email: draft.email.trim() }),
          tags: tagsOf(draft.tags),
          status: draft.status
        },
        headers: { "idempotency-key": formKey }
      })
    )
    setDraft(blank)
    setFormKey(idempotencyKey())
    setOffset(0)
    list.reload()
  })
  const [editing, setEditing] = useState<{ id: string; draft: Draft } | undefined>(undefined)
  const update = useAction(async () => {
    if (editing === undefined) return
    const { draft: changed } = editing
    await call(token, (client) =>
      client.leads.update({
        params: { id: editing.id },
        payload: {
          name: changed.name.trim(),
          phone: changed.phone.trim(),
          email: changed.email.trim() === "" ? null : changed.email.trim(),
          tags: tagsOf(changed.tags),
          status: changed.status
        }
      })
    )
    setEditing(undefined)
    list.reload()
  })
  const remove = useAction(async (id: string) => {
    await call(token, (client) => client.leads.delete({ params: { id } }))
    list.reload()
  })

  return (
    <Page title="Leads">
      <details class="panel">
        <summary>Add a lead</summary>
        <Form label="Add a lead" onSubmit={() => void create.act()}>
          <LeadFields draft={draft} onChange={setDraft} />
          <ErrorText error={create.error} />
          <Submit busy={create.busy}>Add lead</Submit>
        </Form>
      </details>
      {editing === undefined ? null : (
        <section class="panel" aria-label="Edit lead">
          <Form label="Edit lead" onSubmit={() => void update.act()}>
            <LeadFields draft={editing.draft} onChange={(next) => setEditing({ id: editing.id, draft: next })} />
            <ErrorText error={update.error} />
            <Submit busy={update.busy}>Save lead</Submit>
            <button type="button" onClick={() => setEditing(undefined)}>
              Cancel
            </button>
          </Form>
        </section>
      )}
      <ErrorText error={remove.error} />
      <Listing
        loaded={list}
        rows={(data) => data.leads}
        caption="Leads"
        noun="leads"
        empty="No leads yet."
        onOffset={setOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "Name", cell: (row) => <Link href={`/leads/${row.id}`}>{row.name}</Link> },
          { label: "Phone", cell: (row) => row.phone },
          { label: "Email", cell: (row) => row.email ?? "" },
          { label: "Status", cell: (row) => row.status },
          { label: "Tags", cell: (row) => row.tags.join(", ") },
          { label: "Created", cell: (row) => when(row.created_at) },
          {
            label: "Actions",
            cell: (row) => (
              <span class="actions">
                <button
                  type="button"
                  onClick={() =>
                    setEditing({
                      id: row.id,
                      draft: {
                        name: row.name,
                        phone: row.phone,
                        email: row.email ?? "",
                        tags: row.tags.join(", "),
                        status: row.status
                      }
                    })
                  }
                >
                  Edit
                </button>
                <button
                  type="button"
                  class="danger"
                  disabled={remove.busy}
                  onClick={() => confirm(`Delete the lead ${row.name}?`) && void remove.act(row.id)}
                >
                  Delete
                </button>
              </span>
            )
          }
        ]}
      />
    </Page>
  )
}
