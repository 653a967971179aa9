// The README's first session with nudge, from TypeScript: store a contact and a flow, enroll the
// contact, then play the delivery side (claim the first email, say it was sent) and the inbox
// (report the contact's reply), and read the enrollment's journey as nudge writes it.
//
// The client is generated from nudge's protos (`npx buf generate`, into gen/) and speaks gRPC
// over HTTP/2 through Connect. Every call passes a plain object as its request and reads the
// answer's fields: no message type is named here.
//
//   NUDGE_ADDRESS  host:port of the server (default 127.0.0.1:7600)
//   NUDGE_TOKEN    an API token (the server's first start prints one; `nudge token create`)
//
// Exits 0 when the journey shows the enrollment, the email's dispatch, the reply and the end, and
// a bad phone is refused; otherwise exits 1 and says which step failed and why.
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ContactService } from "../gen/nudge/v1/contact_pb";
import { DispatchService } from "../gen/nudge/v1/dispatch_pb";
import { EnrollmentService } from "../gen/nudge/v1/enrollment_pb";
import { FlowService } from "../gen/nudge/v1/flow_pb";
import { SenderService } from "../gen/nudge/v1/sender_pb";
import { SignalService } from "../gen/nudge/v1/signal_pb";

const address = process.env.NUDGE_ADDRESS || "127.0.0.1:7600";
const token = process.env.NUDGE_TOKEN || "";

// Every nudge call carries the token as `authorization: Bearer <token>`, as grpcurl's -H does.
const bearer: Interceptor = (next) => (req) => {
  req.header.set("authorization", `Bearer ${token}`);
  return next(req);
};
// Plain HTTP/2 (grpcurl's -plaintext); use https:// for a server behind TLS.
const transport = createGrpcTransport({ baseUrl: `http://${address}`, interceptors: [bearer] });

const contacts = createClient(ContactService, transport);
const senders = createClient(SenderService, transport);
const flows = createClient(FlowService, transport);
const enrollments = createClient(EnrollmentService, transport);
const dispatches = createClient(DispatchService, transport);
const signals = createClient(SignalService, transport);

// A flow is a JSON document (docs/flows.md), sent as text. Unlike the README's outbound-v1, this
// one has no send window and no jitter, so its first email is due the moment the contact is
// enrolled and the example can claim it at once.
const flow = {
  name: "ts-example-v1",
  start: "email_1",
  steps: {
    email_1: {
      type: "email",
      params: { template: "intro", channel: { subject: "Quick question" } },
      next: { then: "wait_reply" },
    },
    wait_reply: {
      type: "wait_for",
      params: { events: ["reply"], timeout: "5bd" },
      next: { reply: "end_replied", timeout: "end_no_reply" },
    },
    end_replied: { type: "end", params: { outcome: "replied" } },
    end_no_reply: { type: "end", params: { outcome: "no_reply" } },
  },
};

let step = "start"; // what is being done, for the failure message

async function main(): Promise<void> {
  if (!token) throw new Error("NUDGE_TOKEN is not set: the token the server printed, or `nudge token create`");

  // 1. The contact, under the CRM's own id. Upserting the same id again updates it.
  step = "ContactService.UpsertContact";
  const { contact } = await contacts.upsertContact({
    contact: {
      id: "crm-4711",
      email: "ann@example.com",
      phone: "+1 212 555 1234",
      tz: "America/New_York",
      attributes: { company: "Acme", seats: 12 }, // a google.protobuf.Struct is a plain object
    },
  });
  console.log(`contact ${contact?.id}: ${contact?.email}, ${contact?.phone} (${contact?.tz})`);

  // 2. The rep the email goes out as. Without one, an enrollment uses the account's default sender.
  step = "SenderService.UpsertSender";
  const { sender } = await senders.upsertSender({
    sender: { id: "rep-jo", email: "jo@yourco.example", tz: "America/Chicago" },
  });
  console.log(`sender ${sender?.id}: ${sender?.email}`);

  // 3. The flow. Creating a name that exists stores its next version; enrollments keep theirs.
  step = "FlowService.CreateFlow";
  const created = await flows.createFlow({ definition: JSON.stringify(flow) });
  console.log(`flow ${created.flow?.name} version ${created.flow?.version} (id ${created.flow?.id})`);
  for (const p of created.problems) console.log(`  warning ${p.code} at ${p.path}: ${p.message}`);

  // 4. Enroll the contact (the flow by its name or id; 0 or no version means the latest).
  step = "EnrollmentService.Enroll";
  const { enrollment } = await enrollments.enroll({
    contactId: "crm-4711",
    flowId: flow.name,
    senderId: "rep-jo",
  });
  if (!enrollment) throw new Error("Enroll answered no enrollment");
  const enrollmentId = enrollment.id;
  console.log(`enrollment ${enrollmentId}: ${enrollment.status} at step ${enrollment.currentStep}`);

  // 5. The delivery side: claim due emails with a lease, send them, ack each with the lease.
  //    A claim takes any due dispatch of the account; we wait for this enrollment's. Others we
  //    happen to claim go back to the queue when their lease runs out.
  step = "DispatchService.ClaimDispatches";
  const dispatch = await poll("the first email's dispatch", async () => {
    const claimed = await dispatches.claimDispatches({ leaseMs: 30_000n, maxCount: 10, channels: ["email"] });
    return claimed.dispatches.find((d) => d.enrollmentId === enrollmentId);
  });
  console.log(`claimed dispatch ${dispatch.id}: ${dispatch.channel} "${dispatch.template}" to ${dispatch.recipient}`);
  console.log(`  send it with Message-ID ${dispatch.messageId} (replies are matched by it)`);

  step = "DispatchService.AckDispatch";
  const ack = await dispatches.ackDispatch({
    id: dispatch.id,
    leaseToken: dispatch.leaseToken,
    providerMessageId: `example-${dispatch.id}`, // your email provider's id for the message
  });
  console.log(`acked: ${ack.status}`);
  if (ack.status !== "sent") throw new Error(`the ack left the dispatch ${ack.status}, not sent`);

  // 6. The inbox: the contact answered. nudge reads the words into an intent and routes the
  //    reply to every running enrollment of the contact (here it wakes wait_reply).
  step = "SignalService.ReportSignal";
  const receipt = await signals.reportSignal({
    contact: "crm-4711", // or the contact's email, or its phone in E.164
    kind: "reply",
    channel: "email",
    text: "Sounds good, can we talk Thursday?",
  });
  const intent = receipt.intent; // what nudge read in the words
  console.log(`signal ${receipt.signalId}: intent ${intent?.intent} (${intent?.confidence}), reached ${receipt.reached}`);
  for (const d of receipt.deliveries) console.log(`  ${d.enrollmentId}: ${d.effect} ${d.branch}`);

  // 7. The journey, live: Watch streams the account's journey entries (here filtered to this
  //    contact and flow) from the beginning, then each new one as it commits. It never ends on
  //    its own: we stop once we have read what we came for, or give up after 15 seconds.
  step = "EnrollmentService.Watch";
  const missing = new Set(["enrolled", "dispatch", "signal", "completed"]);
  const timeout = AbortSignal.timeout(15_000);
  try {
    const stream = enrollments.watch({ contactId: "crm-4711", flowId: flow.name }, { signal: timeout });
    for await (const watched of stream) {
      if (watched.enrollmentId !== enrollmentId || !watched.entry) continue; // an earlier run's
      const { seq, kind, summary, detail } = watched.entry;
      console.log(`  #${seq} ${kind}: ${summary}`);
      // `summary` is for people; a program reads `kind` and `detail` (a JSON object), e.g. to
      // tell that this dispatch is the email we claimed and this signal the reply we reported.
      if (kind === "dispatch" && detail?.message_id !== dispatch.messageId) continue;
      if (kind === "signal" && detail?.signal !== receipt.signalId) continue;
      missing.delete(kind);
      if (missing.size === 0) break; // leaving the loop cancels the stream
    }
  } catch (err) {
    if (!timeout.aborted) throw err;
  }
  if (missing.size > 0) {
    throw new Error(`after 15 s the journey still lacks: ${[...missing].join(", ")}`);
  }

  // 8. A refused call is a ConnectError: the gRPC code, nudge's message saying what to fix, and
  //    details (google.rpc.BadRequest names the field). Here: a phone without its country code.
  step = "ContactService.UpsertContact with a bad phone";
  const refused = await contacts.upsertContact({ contact: { id: "crm-4712", phone: "2125551234" } }).then(
    () => undefined,
    (err: unknown) => ConnectError.from(err),
  );
  if (!refused) throw new Error("a phone without its country code was accepted");
  if (refused.code !== Code.InvalidArgument) throw refused;
  const details = refused.details.map((d) => ("type" in d ? d.type : d.desc.typeName));
  console.log(`refused as expected: ${Code[refused.code]}: ${refused.rawMessage} [${details.join(", ")}]`);

  console.log("ok: the journey shows the enrollment, the email sent, the reply and the end");
}

// Calls `attempt` every 250 ms until it answers something, for at most 10 seconds.
async function poll<T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = await attempt();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no ${what} after 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

main().catch((err: unknown) => {
  // A refused call is a ConnectError: a gRPC code, nudge's message (which says what to fix),
  // and details such as google.rpc.BadRequest naming the field.
  if (err instanceof ConnectError) {
    console.error(`error: ${step} failed: ${Code[err.code]}: ${err.rawMessage}`);
    if (err.code === Code.Unauthenticated) console.error("  (is NUDGE_TOKEN a token of this server?)");
    if (err.code === Code.Unavailable) console.error(`  (is nudge running at ${address}?)`);
  } else {
    console.error(`error: ${step} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  process.exit(1);
});
