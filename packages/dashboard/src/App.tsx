import { useEffect, useState } from "preact/hooks"
import { Link, navigate, usePath } from "./router.tsx"
import * as Sessions from "./session.ts"
import { follow } from "./stream.ts"
import type { Session } from "./session.ts"
import { SignIn } from "./pages/SignIn.tsx"
import { lazyPage } from "./lazy.tsx"

// One chunk a page, fetched when it is first shown: a page load fetches the shell and its page only.
const Overview = lazyPage(() => import("./pages/Overview.tsx").then((m) => m.Overview))
const Keys = lazyPage(() => import("./pages/Keys.tsx").then((m) => m.Keys))
const Webhooks = lazyPage(() => import("./pages/Webhooks.tsx").then((m) => m.Webhooks))
const Leads = lazyPage(() => import("./pages/Leads.tsx").then((m) => m.Leads))
const Conversations = lazyPage(() => import("./pages/Conversations.tsx").then((m) => m.Conversations))
const Campaigns = lazyPage(() => import("./pages/Campaigns.tsx").then((m) => m.Campaigns))
const Orders = lazyPage(() => import("./pages/Orders.tsx").then((m) => m.Orders))
const Products = lazyPage(() => import("./pages/Products.tsx").then((m) => m.Products))
const Knowledge = lazyPage(() => import("./pages/Knowledge.tsx").then((m) => m.Knowledge))
const Agents = lazyPage(() => import("./pages/Agents.tsx").then((m) => m.Agents))
const Analytics = lazyPage(() => import("./pages/Analytics.tsx").then((m) => m.Analytics))
const Operator = lazyPage(() => import("./pages/Operator.tsx").then((m) => m.Operator))
const Lead = lazyPage(() => import("./pages/Lead.tsx").then((m) => m.Lead))

type AccountSession = Extract<Session, { kind: "account" }>

const ACCOUNT_PAGES: ReadonlyArray<{
  path: string
  label: string
  page: (props: { session: AccountSession; signOut: () => void }) => preact.JSX.Element
}> = [
  { path: "/", label: "Overview", page: Overview },
  { path: "/keys", label: "API keys", page: Keys },
  { path: "/webhooks", label: "Webhooks", page: Webhooks },
  { path: "/leads", label: "Leads", page: Leads },
  { path: "/conversations", label: "Conversations", page: Conversations },
  { path: "/campaigns", label: "Campaigns", page: Campaigns },
  { path: "/orders", label: "Orders", page: Orders },
  { path: "/products", label: "Products", page: Products },
  { path: "/knowledge", label: "Knowledge", page: Knowledge },
  { path: "/agents", label: "Agents", page: Agents },
  { path: "/analytics", label: "Analytics", page: Analytics }
]

const Shell = (props: {
  who: string
  nav: ReadonlyArray<{ path: string; label: string }>
  path: string
  signOut: () => void
  children: preact.ComponentChildren
}) => {
  // A new page moves the focus to its heading, as a page load would for a screen reader.
  useEffect(() => document.getElementById("page-title")?.focus(), [props.path])
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">Leadline</span>
        <span class="who">{props.who}</span>
        <button type="button" class="link" onClick={props.signOut}>
          Sign out
        </button>
      </header>
      <nav class="sidenav" aria-label="Sections">
        <ul>
          {props.nav.map((item) => (
            <li key={item.path}>
              <Link href={item.path} current={item.path === props.path}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main">{props.children}</main>
    </div>
  )
}

export const App = () => {
  const [session, setSession] = useState<Session | undefined>(Sessions.load)
  const path = usePath()
  const signIn = (next: Session) => {
    Sessions.save(next)
    setSession(next)
    navigate(next.kind === "operator" ? "/operator" : "/")
  }
  const signOut = () => {
    Sessions.clear()
    setSession(undefined)
    navigate("/")
  }
  // The account's events move the pages while it is signed in (the operator has no account stream).
  const streamToken = session?.kind === "account" ? session.token : undefined
  useEffect(() => (streamToken === undefined ? undefined : follow(streamToken)), [streamToken])
  if (session === undefined) return <SignIn onSignIn={signIn} />
  if (session.kind === "operator")
    return (
      <Shell who="Operator" nav={[{ path: "/operator", label: "Accounts" }]} path={path} signOut={signOut}>
        <Operator session={session} />
      </Shell>
    )
  // A lead's own page is the one path with an id in it: under Leads in the navigation.
  const leadId = /^\/leads\/([^/]+)$/.exec(path)?.[1]
  const found = ACCOUNT_PAGES.find((page) => page.path === path)
  const Current = found?.page ?? NotFound
  return (
    <Shell
      who={`Signed in as the ${session.role}`}
      nav={ACCOUNT_PAGES}
      path={leadId === undefined ? path : "/leads"}
      signOut={signOut}
    >
      {leadId === undefined ? (
        <Current session={session} signOut={signOut} />
      ) : (
        <Lead session={session} id={decodeURIComponent(leadId)} />
      )}
    </Shell>
  )
}

const NotFound = () => (
  <section class="page">
    <h1 id="page-title" tabIndex={-1}>
      Not found
    </h1>
    <p>
      There is no such page. <Link href="/">Back to the overview</Link>.
    </p>
  </section>
)
