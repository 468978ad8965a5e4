import { useState } from "preact/hooks"
import { HttpApi } from "effect/http-api"
import { KnowledgeApi } from "@leadline/http-adapter/knowledge/KnowledgeApi"
import { idempotencyKey, routes } from "../api.ts"
import type { Session } from "../session.ts"
import { ErrorText, Field, Form, Listing, Page, Submit, useAction, useLoad, when } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(KnowledgeApi))

/** Knowledge sources the agents answer from: add a text source, see each one's state. */
export const Knowledge = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const list = useLoad(() => call(token, (client) => client.knowledge.list({ query: { offset } })), [token, offset])
  const [title, setTitle] = useState("")
  const [content, setContent] = useState("")
  const [formKey, setFormKey] = useState(idempotencyKey)
  const create = useAction(async () => {
    await call(token, (client) =>
      client.knowledge.create({
        payload: { kind: "text", title: title.trim(), content },
        headers: { "idempotency-key": formKey }
      })
    )
    setTitle("")
    setContent("")
    setFormKey(idempotencyKey())
    list.reload()
  })
  return (
    <Page title="Knowledge">
      <details class="panel">
        <summary>Add a text source</summary>
        <Form label="Add a text source" onSubmit={() => void create.act()}>
          <Field label="Title">
            <input required maxLength={200} value={title} onInput={(event) => setTitle(event.currentTarget.value)} />
          </Field>
          <Field label="Content">
            <textarea required rows={6} value={content} onInput={(event) => setContent(event.currentTarget.value)} />
          </Field>
          <ErrorText error={create.error} />
          <Submit busy={create.busy}>Add source</Submit>
        </Form>
      </details>
      <Listing
        loaded={list}
        rows={(data) => data.sources}
        caption="Knowledge sources"
        noun="sources"
        empty="No knowledge sources yet."
        onOffset={setOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "Title", cell: (row) => row.title },
          { label: "Kind", cell: (row) => row.kind },
          { label: "Status", cell: (row) => (row.error === null ? row.status : `${row.status}: ${row.error}`) },
          { label: "Chunks", cell: (row) => row.chunk_count },
          { label: "Updated", cell: (row) => when(row.updated_at) }
        ]}
      />
    </Page>
  )
}
