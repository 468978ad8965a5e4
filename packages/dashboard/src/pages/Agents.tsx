import { useState } from "preact/hooks"
import { HttpApi } from "effect/http-api"
import { AgentsApi } from "@leadline/http-adapter/agents/AgentsApi"
import { AiApi } from "@leadline/http-adapter/ai/AiApi"
import { idempotencyKey, routes } from "../api.ts"
import type { Session } from "../session.ts"
import { ErrorText, Field, Form, Listing, Page, Submit, useAction, useLoad } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(AgentsApi).add(AiApi))

/** AI agents: add one, and try one in the simulation box (nothing is sent to anyone). */
export const Agents = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const list = useLoad(() => call(token, (client) => client.agents.list({ query: { offset } })), [token, offset])
  const [name, setName] = useState("")
  const [formKey, setFormKey] = useState(idempotencyKey)
  const create = useAction(async () => {
    await call(token, (client) =>
      client.agents.create({ payload: { name: name.trim() }, headers: { "idempotency-key": formKey } })
    )
    setName("")
    setFormKey(idempotencyKey())
    list.reload()
  })
  const [agentId, setAgentId] = useState("")
  const [message, setMessage] = useState("")
  const [reply, setReply] = useState<{ text: string; kind: string; sources: ReadonlyArray<string> } | undefined>()
  const simulate = useAction(async () => {
    const answer = await call(token, (client) =>
      client.ai.simulate({ payload: { agent_id: agentId || (list.data?.agents[0]?.id ?? ""), message } })
    )
    setReply({
      text: answer.reply.text,
      kind: answer.reply.kind,
      sources: [...new Set(answer.snippets.map((snippet) => snippet.source_title))]
    })
  })
  return (
    <Page title="Agents">
      <details class="panel">
        <summary>Add an agent</summary>
        <Form label="Add an agent" onSubmit={() => void create.act()}>
          <Field label="Name">
            <input required maxLength={100} value={name} onInput={(event) => setName(event.currentTarget.value)} />
          </Field>
          <ErrorText error={create.error} />
          <Submit busy={create.busy}>Add agent</Submit>
        </Form>
      </details>
      <Listing
        loaded={list}
        rows={(data) => data.agents}
        caption="Agents"
        noun="agents"
        empty="No agents yet."
        onOffset={setOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "Name", cell: (row) => row.name },
          { label: "Enabled", cell: (row) => (row.enabled ? "yes" : "no") },
          { label: "Model", cell: (row) => row.model ?? "server default" },
          {
            label: "Knowledge",
            // None chosen means every source of the account.
            cell: (row) =>
              row.knowledge_source_ids.length === 0 ? "all sources" : `${row.knowledge_source_ids.length} sources`
          }
        ]}
      />
      {list.data === undefined || list.data.agents.length === 0 ? null : (
        <>
          <h2>Try an agent</h2>
          <Form label="Simulate" onSubmit={() => void simulate.act()}>
            <Field label="Agent">
              <select
                value={agentId || (list.data.agents[0]?.id ?? "")}
                onChange={(event) => setAgentId(event.currentTarget.value)}
              >
                {list.data.agents.map((agent) => (
                  <option key={agent.id} value={agent.id}>
                    {agent.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Customer message">
              <textarea
                required
                maxLength={4096}
                value={message}
                onInput={(event) => setMessage(event.currentTarget.value)}
              />
            </Field>
            <ErrorText error={simulate.error} />
            <Submit busy={simulate.busy}>Simulate</Submit>
          </Form>
          {reply === undefined ? null : (
            <div class="panel" role="status" aria-label="Simulated reply">
              <p>{reply.text}</p>
              <small class="muted">
                {reply.kind}
                {reply.sources.length === 0 ? "" : ` · from ${reply.sources.join(", ")}`}
              </small>
            </div>
          )}
        </>
      )}
    </Page>
  )
}
