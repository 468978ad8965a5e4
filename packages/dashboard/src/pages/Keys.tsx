import { useState } from "preact/hooks"
import * as Scopes from "@leadline/core/auth/Scopes"
import { HttpApi } from "effect/http-api"
import { KeysApi } from "@leadline/http-adapter/keys/KeysApi"
import { idempotencyKey, routes } from "../api.ts"
import type { Session } from "../session.ts"
import { ErrorText, Field, Form, Listing, Page, ShownOnce, Submit, useAction, useLoad, when } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(KeysApi))

type Scope = Scopes.Scope

/** One checkbox per scope, each saying what it grants; none checked means full access. */
const ScopePicker = (props: {
  value: ReadonlyArray<Scope>
  onChange: (scopes: ReadonlyArray<Scope>) => void
  name: string
}) => (
  <fieldset class="scopes">
    <legend>Scopes (none: full access)</legend>
    {Scopes.SCOPES.map((scope) => (
      <label class="choice" key={scope}>
        <input
          type="checkbox"
          name={props.name}
          value={scope}
          checked={props.value.includes(scope)}
          onChange={(event) =>
            props.onChange(
              event.currentTarget.checked ? [...props.value, scope] : props.value.filter((other) => other !== scope)
            )
          }
        />
        <code>{scope}</code> <small class="muted">grants {Scopes.permissionsOf([scope]).join(", ")}</small>
      </label>
    ))}
  </fieldset>
)

interface KeyRow {
  readonly id: string
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<Scope>
  readonly created_at: string
  readonly revoked_at: string | null
}

/** The account's API keys: issue one (shown once), change a key's scopes, revoke one. */
export const Keys = (props: { session: Extract<Session, { kind: "account" }>; signOut: () => void }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const list = useLoad(() => call(token, (client) => client.keys.list({ query: { offset } })), [token, offset])
  const [name, setName] = useState("")
  const [scopes, setScopes] = useState<ReadonlyArray<Scope>>([])
  const [formKey, setFormKey] = useState(idempotencyKey)
  const [created, setCreated] = useState<string | undefined>(undefined)
  const [editing, setEditing] = useState<{ id: string; scopes: ReadonlyArray<Scope> } | undefined>(undefined)
  const [revoking, setRevoking] = useState<KeyRow | undefined>(undefined)

  const create = useAction(async () => {
    const answer = await call(token, (client) =>
      client.keys.create({
        payload: { ...(name.trim() === "" ? {} : { name: name.trim() }), scopes },
        headers: { "idempotency-key": formKey }
      })
    )
    setCreated(answer.api_key ?? undefined)
    setName("")
    setScopes([])
    setFormKey(idempotencyKey())
    list.reload()
  })
  const save = useAction(async () => {
    if (editing === undefined) return
    await call(token, (client) =>
      client.keys.setScopes({ params: { key_id: editing.id }, payload: { scopes: editing.scopes } })
    )
    setEditing(undefined)
    list.reload()
  })
  const revoke = useAction(async (row: KeyRow) => {
    await call(token, (client) => client.keys.revoke({ params: { key_id: row.id } }))
    setRevoking(undefined)
    if (isSignedInWith(row)) props.signOut()
    else list.reload()
  })
  // /api/me does not name the key, but a key starts with its visible prefix.
  const isSignedInWith = (row: KeyRow) => token.startsWith(row.prefix)

  return (
    <Page title="API keys">
      {created === undefined ? null : (
        <ShownOnce label="The new API key" value={created} onDone={() => setCreated(undefined)} />
      )}
      <details class="panel" open={list.data?.keys.length === 0}>
        <summary>Issue a key</summary>
        <Form label="Issue a key" onSubmit={() => void create.act()}>
          <Field label="Name" hint="What uses it, e.g. “website form”.">
            <input value={name} maxLength={200} onInput={(event) => setName(event.currentTarget.value)} />
          </Field>
          <ScopePicker name="new-scopes" value={scopes} onChange={setScopes} />
          <ErrorText error={create.error} />
          <Submit busy={create.busy}>Issue key</Submit>
        </Form>
      </details>
      {revoking === undefined ? null : (
        <div class="confirm" role="alertdialog" aria-labelledby="revoke-title">
          <p id="revoke-title">
            {isSignedInWith(revoking)
              ? "This is the key you are signed in with. Revoking it signs you out, and every program using it gets 401 from now on."
              : `Revoke “${revoking.name || revoking.prefix}”? Every program using it gets 401 from now on.`}
          </p>
          <ErrorText error={revoke.error} />
          <button type="button" class="danger" disabled={revoke.busy} onClick={() => void revoke.act(revoking)}>
            {isSignedInWith(revoking) ? "Revoke my key and sign out" : "Revoke"}
          </button>
          <button type="button" onClick={() => setRevoking(undefined)}>
            Cancel
          </button>
        </div>
      )}
      <Listing
        loaded={list}
        rows={(data) => data.keys}
        caption="API keys"
        noun="keys"
        empty="No keys yet."
        onOffset={setOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "Name", cell: (row) => row.name || "(unnamed)" },
          { label: "Key", cell: (row) => <code>{row.prefix}…</code> },
          {
            label: "Scopes",
            cell: (row) =>
              editing?.id === row.id ? (
                <Form label={`Scopes of ${row.prefix}`} onSubmit={() => void save.act()} class="inline-form">
                  <ScopePicker
                    name={`scopes-${row.id}`}
                    value={editing.scopes}
                    onChange={(next) => setEditing({ id: row.id, scopes: next })}
                  />
                  <ErrorText error={save.error} />
                  <Submit busy={save.busy}>Save scopes</Submit>
                  <button type="button" onClick={() => setEditing(undefined)}>
                    Cancel
                  </button>
                </Form>
              ) : row.scopes.length === 0 ? (
                "full access"
              ) : (
                row.scopes.join(", ")
              )
          },
          { label: "Created", cell: (row) => when(row.created_at) },
          {
            label: "Status",
            cell: (row) =>
              row.revoked_at === null
                ? isSignedInWith(row)
                  ? "active (this session)"
                  : "active"
                : `revoked ${when(row.revoked_at)}`
          },
          {
            label: "Actions",
            cell: (row) =>
              row.revoked_at !== null ? null : (
                <span class="actions">
                  <button type="button" onClick={() => setEditing({ id: row.id, scopes: row.scopes })}>
                    Edit scopes
                  </button>
                  <button type="button" class="danger" onClick={() => setRevoking(row)}>
                    Revoke
                  </button>
                </span>
              )
          }
        ]}
      />
    </Page>
  )
}
