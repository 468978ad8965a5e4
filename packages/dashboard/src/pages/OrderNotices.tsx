import { useEffect, useState } from "preact/hooks"
import { HttpApi } from "effect/http-api"
import { OrderNoticesApi } from "@leadline/http-adapter/orders/OrderNoticesApi"
import { routes } from "../api.ts"
import { ErrorText, Field, Form, Submit, useAction, useLoad } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(OrderNoticesApi))

/**
 * The account's order notices: a WhatsApp message to the lead on each status move, off by
 * default. Reading needs `orders:read`; saving needs a full-access key (the refusal shows).
 */
export const OrderNotices = (props: { token: string }) => {
  const current = useLoad(() => call(props.token, (client) => client.orderNotices.get()), [props.token])
  const [draft, setDraft] = useState({ enabled: false, name: "", language: "" })
  useEffect(() => {
    const data = current.data
    if (data !== undefined) {
      setDraft({ enabled: data.enabled, name: data.template?.name ?? "", language: data.template?.language ?? "" })
    }
  }, [current.data])
  const save = useAction(async () => {
    const name = draft.name.trim()
    await call(props.token, (client) =>
      client.orderNotices.update({
        payload: {
          enabled: draft.enabled,
          template: name === "" ? null : { name, language: draft.language.trim() }
        }
      })
    )
    current.reload()
  })
  const state =
    current.data === undefined
      ? "…"
      : !current.data.enabled
        ? "Off"
        : current.data.template === null
          ? "On: a text within the customer's 24-hour window"
          : `On: template ${current.data.template.name} (${current.data.template.language})`
  return (
    <details class="panel">
      <summary>Status notices to leads</summary>
      <p role="status" aria-label="Status notices">
        {state}
      </p>
      <ErrorText error={current.error} />
      <Form label="Status notices to leads" onSubmit={() => void save.act()}>
        <label class="choice">
          <input
            type="checkbox"
            checked={draft.enabled}
            onChange={(event) => setDraft({ ...draft, enabled: event.currentTarget.checked })}
          />
          Message the lead on WhatsApp when an order's status moves
        </label>
        <Field
          label="Template name"
          hint="An approved template whose body takes the order's id and its status; empty sends a text, which WhatsApp takes only within a day of the customer's last message."
        >
          <input
            value={draft.name}
            pattern="[a-z0-9_]+"
            onInput={(event) => setDraft({ ...draft, name: event.currentTarget.value })}
          />
        </Field>
        <Field label="Template language" hint="As Meta spells it: en, pt_BR.">
          <input
            value={draft.language}
            required={draft.name.trim() !== ""}
            onInput={(event) => setDraft({ ...draft, language: event.currentTarget.value })}
          />
        </Field>
        <ErrorText error={save.error} />
        <Submit busy={save.busy}>Save notices</Submit>
      </Form>
    </details>
  )
}
