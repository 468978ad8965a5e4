import { useState } from "preact/hooks"
import { HttpApi } from "effect/http-api"
import { CampaignsApi } from "@leadline/http-adapter/campaigns/CampaignsApi"
import { routes } from "../api.ts"
import type { Session } from "../session.ts"
import { Listing, Page, useLoad, when } from "../ui.tsx"

/** The routes this page calls. */
const call = routes(HttpApi.make("dashboard").add(CampaignsApi))

const FUNNEL = ["queued", "sent", "delivered", "read", "failed"] as const

/** The funnel of one campaign as bars, each the share of its recipients. */
const Funnel = (props: { stats: Record<(typeof FUNNEL)[number] | "total", number> }) => (
  <dl class="funnel">
    {FUNNEL.map((step) => {
      const share = props.stats.total === 0 ? 0 : props.stats[step] / props.stats.total
      return (
        <div key={step} class={`funnel-step step-${step}`}>
          <dt>{step}</dt>
          <dd>
            <svg
              width="120"
              height="10"
              role="img"
              aria-label={`${step}: ${props.stats[step]} of ${props.stats.total}`}
            >
              <rect width="120" height="10" class="bar-track" />
              <rect width={Math.round(120 * share)} height="10" class="bar" />
            </svg>{" "}
            {props.stats[step]}
          </dd>
        </div>
      )
    })}
  </dl>
)

/** Campaigns with their state and funnel; create and send them through the API. */
export const Campaigns = (props: { session: Extract<Session, { kind: "account" }> }) => {
  const token = props.session.token
  const [offset, setOffset] = useState(0)
  const list = useLoad(() => call(token, (client) => client.campaigns.list({ query: { offset } })), [token, offset])
  return (
    <Page title="Campaigns">
      <Listing
        loaded={list}
        rows={(data) => data.campaigns}
        caption="Campaigns"
        noun="campaigns"
        empty="No campaigns yet: create one with POST /api/v1/campaigns."
        onOffset={setOffset}
        rowKey={(row) => row.id}
        columns={[
          { label: "Name", cell: (row) => row.name },
          { label: "Status", cell: (row) => row.status },
          { label: "Recipients", cell: (row) => row.stats.total || (row.audience_count ?? 0) },
          { label: "Funnel", cell: (row) => <Funnel stats={row.stats} /> },
          { label: "Created", cell: (row) => when(row.created_at) }
        ]}
      />
    </Page>
  )
}
