#!/usr/bin/env python3
"""Generate fixtures/providers/requests/*.json: providers' native webhook requests,
signed the way each provider signs them, by implementations nudge shares no code with:

- Twilio: the `twilio` package's own `twilio.request_validator.RequestValidator`
  (`compute_signature`, checked again with `validate`);
- SendGrid Event Webhook: ECDSA P-256 / SHA-256 with `cryptography` (RFC 6979 deterministic
  signing), checked with sendgrid-python's own `EventWebhook.verify_signature`; plus
  sendgrid-python's signed test vector, byte for byte (`sendgrid-vector.json`);
- Amazon SES through SNS: RSA PKCS#1 v1.5 (SHA1 for SignatureVersion 1, SHA256 for 2) with
  `cryptography`, by a self-signed RSA-2048 certificate made once and committed
  (fixtures/providers/ses/nudge-test-cert.pem and nudge-test-key.pem, valid 2025-01-01 to
  2035-01-01), checked the way AWS's validators build the string to sign;
- Mailgun, Calendly, Cal.com: HMAC-SHA256 with Python's `hmac`/`hashlib` (Mailgun checked
  again with the `mailgun` package's `SecurityGuard.verify_webhook`);
- SendGrid Inbound Parse and Postmark: HTTP Basic credentials (neither signs its requests).

Each payload is based on the provider's documented sample (each builder below names the one it
follows: the provider's page, or the SDK test or library fixture it is in), moved into the
test world the Rust test creates: account `default`, public URL https://nudge.example.com,
contacts alice@example.com (+14155550100) and bob@example.com (+14155550101), and a sender
whose email and calendar is rep@acme.example. Replies carry `In-Reply-To: <NUDGE_THREAD_ID>`
literally (URL-encoded as `%3CNUDGE_THREAD_ID%3E`), where the body is not signed, for the test
to put the real Message-ID in.

One file per provider:
  {"provider", "secret" (as `nudge provider-secret set` takes it), "signed_at" (unix seconds the
   signatures were made at: the test server's signature clock), "provider_message_ids" (the ids
   the test acks dispatches with), "requests": {case: {"path", "headers", "body" | "body_base64"}}}
JSON with sorted keys, 2-space indent, a trailing newline. `body_base64` only where the body is
not UTF-8 (SendGrid's charset case). Only valid requests and signed-but-malformed ones are
made: the Rust test derives the forged, replayed and stale variants itself.

Deterministic: fixed timestamps, tokens and ids (derived from the case names), RFC 6979 ECDSA,
the committed RSA key; the P-256 key is derived from a fixed label. Re-running rewrites the same
bytes; `--check` compares instead of writing and fails on any difference. The RSA key and the
certificate are made only when missing.

Usage: python3 -m pip install -r scripts/requirements-providers.txt &&
       python3 scripts/gen_provider_fixtures.py [--check]
"""

import argparse
import base64
import datetime as dt
import email.parser
import email.policy
import hashlib
import hmac
import json
import os
import sys
import urllib.parse
import uuid
from importlib import metadata

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import NameOID
from mailgun.security import SecurityGuard
from sendgrid.helpers.eventwebhook import EventWebhook
from twilio.request_validator import RequestValidator

PINNED = {"twilio": "9.13.0", "cryptography": "48.0.0", "sendgrid": "6.12.5", "mailgun": "1.10.0"}

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
OUT_DIR = os.path.join(ROOT, "fixtures", "providers", "requests")
SES_DIR = os.path.join(ROOT, "fixtures", "providers", "ses")
SES_CERT = os.path.join(SES_DIR, "nudge-test-cert.pem")
SES_KEY = os.path.join(SES_DIR, "nudge-test-key.pem")

# --- the test world -------------------------------------------------------------------------

SIGNED_AT = 1768478400  # 2026-01-15T12:00:00Z
SIGNED_AT_ISO = "2026-01-15T12:00:00.000Z"
PUBLIC_URL = "https://nudge.example.com"
ACCOUNT = "default"
THREAD = "<NUDGE_THREAD_ID>"
ALICE, ALICE_NAME, ALICE_PHONE = "alice@example.com", "Alice Example", "+14155550100"
BOB, BOB_NAME, BOB_PHONE = "bob@example.com", "Bob Example", "+14155550101"
REP, REP_NAME = "rep@acme.example", "Rep Acme"
TWILIO_NUMBER = "+15017122661"  # the From of Twilio's documented samples
SUBJECT = "Quick question about Acme"
ORIGINAL_TEXT = (
    "On Wed, Jan 14, 2026 at 3:00 PM Rep Acme <rep@acme.example> wrote:\n"
    "> Hi Alice,\n"
    "> would a 20-minute call next week work for you?\n"
    "> Rep\n"
)

SECRETS = {
    "mailgun": "key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
    "sendgrid": "parse:s3cret-parse",
    "postmark": "pm:s3cret-pm",
    "ses": "arn:aws:sns:us-east-1:123456789012:nudge-ses",
    "calendly": "calendly-signing-key-0123456789",
    "calcom": "calcom-secret-0123456789",
    "twilio": "twilio-test-token",
}
SES_TOPIC = SECRETS["ses"]
SES_OTHER_TOPIC = "arn:aws:sns:us-east-1:123456789012:someone-else"
SNS_CERT_URL = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-nudgetest.pem"
SNS_EVIL_CERT_URL = "https://evil.example.com/cert.pem"

# The providers' ids of the messages the test acks its dispatches with (AckDispatch).
MAILGUN_IDS = {"alice": "20260115115500.1.A11CE0C0FFEE0001@mg.acme.example"}
SENDGRID_IDS = {"alice": "A1iceSgMsgId_000000001", "bob": "B0bSgMsgId_00000000002"}
POSTMARK_IDS = {"alice": "a11ce0b1-7c2d-4e8f-9a3b-5c6d7e8f9a01"}
SES_IDS = {"alice": "010f019bc1e2d3a4-a11ce000-2f6b-4b1e-9c3d-5e8f7a6b4c21-000000"}
TWILIO_IDS = {
    "alice": "SM" + "a11ce" + "0" * 26 + "1",  # status_undelivered
    "alice_opted_out": "SM" + "a11ce" + "0" * 26 + "2",  # status_opted_out
    "bob": "SM" + "b0b" + "0" * 28 + "1",  # status_delivered
}
TWILIO_ACCOUNT_SID = "AC" + "0123456789abcdef" * 2


# --- helpers --------------------------------------------------------------------------------


def digest(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


def hex_id(label: str, n: int) -> str:
    return hashlib.sha256(label.encode()).hexdigest()[:n]


def b64url_id(label: str, n: int) -> str:
    return base64.urlsafe_b64encode(digest(label)).decode().rstrip("=")[:n]


def uuid_id(label: str) -> str:
    return str(uuid.UUID(bytes=digest(label)[:16], version=4))


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def path(p: str) -> str:
    return f"{p}?account={ACCOUNT}"


def request(p: str, headers: dict, body: bytes) -> dict:
    out = {"path": p, "headers": headers}
    try:
        out["body"] = body.decode("utf-8")
    except UnicodeDecodeError:
        out["body_base64"] = base64.b64encode(body).decode()
    return out


def body_bytes(req: dict) -> bytes:
    if "body" in req:
        return req["body"].encode("utf-8")
    return base64.b64decode(req["body_base64"])


def urlencoded(pairs) -> bytes:
    # quote_plus, as browsers and providers encode forms: `<` → %3C, ` ` → +, `+` → %2B.
    return urllib.parse.urlencode(pairs).encode()


def multipart(boundary: str, fields) -> bytes:
    """multipart/form-data, CRLF lines. A field is (name, value) or
    (name, value, filename, content_type); values are str (UTF-8) or bytes."""
    out = b""
    for field in fields:
        name, value = field[0], field[1]
        data = value.encode("utf-8") if isinstance(value, str) else value
        out += f"--{boundary}\r\n".encode()
        if len(field) > 2:
            filename, ctype = field[2], field[3]
            out += f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'.encode()
            out += f"Content-Type: {ctype}\r\n".encode()
        else:
            out += f'Content-Disposition: form-data; name="{name}"\r\n'.encode()
        out += b"\r\n" + data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


def basic(credentials: str) -> str:
    return "Basic " + base64.b64encode(credentials.encode()).decode()


def mime(headers, text: str) -> str:
    """A raw RFC 5322 message, CRLF lines."""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers)
    return head + "\r\n" + text.replace("\r\n", "\n").replace("\n", "\r\n")


# --- Mailgun --------------------------------------------------------------------------------


def mailgun_signature(case: str) -> dict:
    token = hex_id(f"mailgun token {case}", 50)
    timestamp = str(SIGNED_AT)
    sig = hmac.new(SECRETS["mailgun"].encode(), (timestamp + token).encode(), hashlib.sha256).hexdigest()
    return {"timestamp": timestamp, "token": token, "signature": sig}


def mailgun_inbound_fields(case: str, headers, body_plain: str, stripped_text=None, stripped_sig=None,
                           recipient=REP, sender=ALICE, from_=None, extra_top=()):
    """A Routes forward() post in parsed mode, as Mailgun's route tester posts it (the sample in
    django-inbound-email's inbound_email/tests/test_files/mailgun_post.py): the envelope fields,
    every MIME header again as a top-level field in its own case, body-plain, stripped-*,
    message-headers (JSON list of [name, value]), then timestamp, token, signature."""
    sig = mailgun_signature(case)
    header_map = {k.lower(): v for k, v in headers}
    fields = [
        ("recipient", recipient),
        ("sender", sender),
        ("subject", header_map.get("subject", "")),
        ("from", from_ or header_map.get("from", "")),
    ]
    fields += [(k, v) for k, v in headers]
    fields.append(("body-plain", body_plain))
    if stripped_text is not None:
        fields.append(("stripped-text", stripped_text))
    if stripped_sig is not None:
        fields.append(("stripped-signature", stripped_sig))
    fields += list(extra_top)
    fields.append(("message-headers", json.dumps([[k, v] for k, v in headers])))
    fields += [("timestamp", sig["timestamp"]), ("token", sig["token"]), ("signature", sig["signature"])]
    return fields


def reply_headers(message_id: str, date: str, subject: str = "Re: " + SUBJECT, extra=()):
    return [
        ("X-Envelope-From", f"<{ALICE}>"),
        ("Received", f"by mail-yw1-f170.google.com with SMTP id 00721157ae682-6f0a1b2c3d; {date}"),
        ("Mime-Version", "1.0"),
        ("From", f"{ALICE_NAME} <{ALICE}>"),
        ("Date", date),
        ("Message-Id", message_id),
        ("In-Reply-To", THREAD),
        ("References", THREAD),
        ("Subject", subject),
        ("To", f"{REP_NAME} <{REP}>"),
        *extra,
        ("Content-Type", 'text/plain; charset="UTF-8"'),
        ("X-Mailgun-Incoming", "Yes"),
    ]


def mailgun() -> dict:
    inbound = path("/webhooks/email/mailgun")
    events = path("/webhooks/email/mailgun/events")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    reqs = {}

    reply_text = "Hi Rep,\n\nYes, Tuesday afternoon works. Call me any time after 2.\n\nThanks,\nAlice\n\n" + ORIGINAL_TEXT
    reqs["reply"] = request(inbound, form, urlencoded(mailgun_inbound_fields(
        "reply",
        reply_headers("<CAJx8A1iceReply0001@mail.gmail.com>", "Thu, 15 Jan 2026 11:59:30 +0000"),
        reply_text,
        stripped_text="Hi Rep,\n\nYes, Tuesday afternoon works. Call me any time after 2.",
        stripped_sig="Thanks,\nAlice",
    )))

    # With an attachment Mailgun posts multipart/form-data: attachment-count and attachment-1.
    boundary = "3b6c9a1e4d7f4a2b8c0d1e2f3a4b5c6d"
    fields = mailgun_inbound_fields(
        "reply_multipart",
        reply_headers("<CAJx8A1iceReply0002@mail.gmail.com>", "Thu, 15 Jan 2026 11:59:40 +0000"),
        "Hi Rep,\n\nThe agenda for Tuesday is attached.\n\nAlice\n\n" + ORIGINAL_TEXT,
        stripped_text="Hi Rep,\n\nThe agenda for Tuesday is attached.",
        stripped_sig="Alice",
        extra_top=[("attachment-count", "1"), ("content-id-map", "{}")],
    )
    fields.append(("attachment-1", "1. Pricing\n2. Rollout plan\n3. Next steps\n", "agenda.txt", "text/plain"))
    reqs["reply_multipart"] = request(
        inbound, {"Content-Type": f"multipart/form-data; boundary={boundary}"}, multipart(boundary, fields))

    ooo_headers = reply_headers(
        "<CAJx8A1iceOoo0003@mail.gmail.com>", "Thu, 15 Jan 2026 11:59:45 +0000", subject="Out of Office",
        extra=[("Auto-Submitted", "auto-replied"), ("X-Auto-Response-Suppress", "All")])
    reqs["auto_reply"] = request(inbound, form, urlencoded(mailgun_inbound_fields(
        "auto_reply", ooo_headers,
        "Thank you for your message. I am out of the office with no access to email and will be "
        "back on Monday, January 19, 2026.\n\nAlice\n",
    )))

    # A Gmail DSN (the shape of fixtures/inbox's Gmail samples), forwarded in parsed mode: the
    # human text as body-plain, the report's other parts as attachments (Mailgun uploads every
    # part that is not the text or HTML body); no In-Reply-To / References: the bounced
    # message's Message-ID is in its text/rfc822-headers part.
    dsn_boundary = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
    dsn_headers = [
        ("Return-Path", "<>"),
        ("Received", "by mail-sor-f69.google.com with SMTP id 5b1f17b1804b1-4f2a9c; Thu, 15 Jan 2026 03:59:50 -0800 (PST)"),
        ("From", "Mail Delivery Subsystem <mailer-daemon@googlemail.com>"),
        ("To", REP),
        ("Auto-Submitted", "auto-replied"),
        ("Subject", "Delivery Status Notification (Failure)"),
        ("Message-Id", "<67a2c0de.050a0220.2f3e1.0001.GMR@mx.google.com>"),
        ("Date", "Thu, 15 Jan 2026 03:59:50 -0800 (PST)"),
        ("Mime-Version", "1.0"),
        ("Content-Type", "multipart/report; boundary=\"0000000000001a2b3c4d5e6f7a8b\"; report-type=delivery-status"),
        ("X-Mailgun-Incoming", "Yes"),
    ]
    fields = mailgun_inbound_fields(
        "dsn", dsn_headers,
        "\n** Address not found **\n\nYour message wasn't delivered to alice@example.com because the "
        "address couldn't be found, or is unable to receive mail.\n\nLearn more here: "
        "https://support.google.com/mail/?p=NoSuchUser\n\nThe response was:\n\n550 5.1.1 The email "
        "account that you tried to reach does not exist. Please try double-checking the recipient's "
        "email address for typos or unnecessary spaces. https://support.google.com/mail/?p=NoSuchUser\n",
        recipient=REP, sender="", from_="Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
        extra_top=[("attachment-count", "2"), ("content-id-map", "{}")],
    )
    fields.append(("attachment-1",
                   "Reporting-MTA: dns; googlemail.com\r\nReceived-From-MTA: dns; rep@acme.example\r\n"
                   "Arrival-Date: Thu, 15 Jan 2026 03:59:49 -0800 (PST)\r\n"
                   "X-Original-Message-ID: " + THREAD + "\r\n\r\n"
                   "Final-Recipient: rfc822; alice@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n"
                   "Diagnostic-Code: smtp; 550-5.1.1 The email account that you tried to reach does not exist.\r\n"
                   "Last-Attempt-Date: Thu, 15 Jan 2026 03:59:50 -0800 (PST)\r\n",
                   "noname", "message/delivery-status"))
    fields.append(("attachment-2",
                   f"Return-Path: <{REP}>\r\nFrom: {REP_NAME} <{REP}>\r\nTo: {ALICE}\r\n"
                   f"Subject: {SUBJECT}\r\nDate: Thu, 15 Jan 2026 11:59:48 +0000\r\n"
                   f"Message-ID: {THREAD}\r\nMIME-Version: 1.0\r\n"
                   "Content-Type: text/plain; charset=\"UTF-8\"\r\n\r\n",
                   "noname", "text/rfc822-headers"))
    reqs["dsn"] = request(
        inbound, {"Content-Type": f"multipart/form-data; boundary={dsn_boundary}"}, multipart(dsn_boundary, fields))

    # Signed, but `message-headers` is not the JSON list of [name, value] pairs mailgun.rs
    # reads (a JSON object): 422 naming `message-headers`.
    sig = mailgun_signature("malformed")
    reqs["malformed"] = request(inbound, form, urlencoded([
        ("recipient", REP), ("sender", ALICE), ("from", f"{ALICE_NAME} <{ALICE}>"),
        ("subject", "Re: " + SUBJECT), ("body-plain", "Sounds good."),
        ("message-headers", json.dumps({"From": f"{ALICE_NAME} <{ALICE}>", "In-Reply-To": THREAD})),
        ("timestamp", sig["timestamp"]), ("token", sig["token"]), ("signature", sig["signature"]),
    ]))

    # Event webhooks: the failed / complained / unsubscribed events of django-anymail's
    # tests/test_mailgun_webhooks.py and of Mailgun's page
    # documentation.mailgun.com/docs/mailgun/user-manual/webhooks/webhook-payloads, for alice's
    # message.
    def event(case: str, data: dict) -> dict:
        body = {"signature": mailgun_signature(case)}
        if data is not None:
            body["event-data"] = data
        return request(events, {"Content-Type": "application/json"}, json.dumps(body).encode())

    message = {
        "headers": {"to": f"{ALICE_NAME} <{ALICE}>", "message-id": MAILGUN_IDS["alice"],
                    "from": f"{REP_NAME} <{REP}>", "subject": SUBJECT},
        "attachments": [], "size": 1893,
    }

    def data(case: str, event_name: str, at: float, level: str, **extra) -> dict:
        d = {"id": b64url_id(f"mailgun event {case}", 22), "timestamp": at, "log-level": level,
             "event": event_name}
        d.update(extra)
        d.setdefault("recipient", ALICE)
        d.setdefault("recipient-domain", "example.com")
        d["message"] = message
        d.setdefault("tags", [])
        d.setdefault("user-variables", {})
        return d

    reqs["event_failed_permanent"] = event("event_failed_permanent", data(
        "event_failed_permanent", "failed", 1768478395.412301, "error", severity="permanent", reason="bounce",
        envelope={"sender": REP, "transport": "smtp", "targets": ALICE},
        **{"delivery-status": {"tls": True, "mx-host": "mx.example.com", "attempt-no": 1, "description": "",
                               "session-seconds": 0.43, "utf8": True, "code": 550,
                               "message": "5.1.1 The email account that you tried to reach does not exist. Please try\n"
                                          "5.1.1 double-checking the recipient's email address for typos",
                               "certificate-verified": True}}))
    reqs["event_failed_temporary"] = event("event_failed_temporary", data(
        "event_failed_temporary", "failed", 1768478396.118744, "warn", severity="temporary", reason="generic",
        envelope={"sender": REP, "transport": "smtp", "targets": ALICE},
        **{"delivery-status": {"tls": True, "mx-host": "mx.example.com", "attempt-no": 1, "description": "",
                               "session-seconds": 0.51, "utf8": True, "code": 452, "retry-seconds": 600,
                               "message": "4.2.2 The email account that you tried to reach is over quota.",
                               "certificate-verified": True}}))
    reqs["event_complained"] = event("event_complained", data(
        "event_complained", "complained", 1768478397.049634, "warn"))
    reqs["event_unsubscribed"] = event("event_unsubscribed", data(
        "event_unsubscribed", "unsubscribed", 1768478398.421473, "info",
        ip="203.0.113.7", geolocation={"country": "US", "region": "CA", "city": "San Francisco"},
        **{"client-info": {"client-type": "browser", "client-os": "OS X", "device-type": "desktop",
                           "client-name": "Chrome", "user-agent": "Mozilla/5.0"}}))
    reqs["event_opened"] = event("event_opened", data(
        "event_opened", "opened", 1768478399.003317, "info",
        ip="203.0.113.7", geolocation={"country": "US", "region": "CA", "city": "San Francisco"},
        **{"client-info": {"client-type": "mobile browser", "client-os": "iOS", "device-type": "mobile",
                           "client-name": "Mobile Safari", "user-agent": "Mozilla/5.0"}}))
    # Signed, with no `event-data` at all: 422 "no `event-data` object".
    reqs["event_malformed"] = event("event_malformed", None)

    return {"provider": "mailgun", "secret": SECRETS["mailgun"], "signed_at": SIGNED_AT,
            "provider_message_ids": MAILGUN_IDS, "requests": reqs}


# --- SendGrid Inbound Parse -----------------------------------------------------------------


def sendgrid() -> dict:
    p = path("/webhooks/email/sendgrid")
    auth = basic(SECRETS["sendgrid"])
    reqs = {}
    envelope = compact({"to": [REP], "from": ALICE})

    # "POST the raw, full MIME message" (send_raw): `email` instead of headers/text/html
    # (setting-up-the-inbound-parse-webhook.md in sendgrid/docs, under
    # content/docs/for-developers/parsing-email/).
    raw = mime([
        ("Received", "by mx0047p1mdw1.sendgrid.net with SMTP id 7Ab3cD9eF1 Thu, 15 Jan 2026 11:59:52 +0000 (UTC)"),
        ("MIME-Version", "1.0"),
        ("From", f"{ALICE_NAME} <{ALICE}>"),
        ("Date", "Thu, 15 Jan 2026 11:59:50 +0000"),
        ("Message-ID", "<CAJx8A1iceSgRaw0001@mail.gmail.com>"),
        ("In-Reply-To", THREAD),
        ("References", THREAD),
        ("Subject", "Re: " + SUBJECT),
        ("To", f"{REP_NAME} <{REP}>"),
        ("Content-Type", 'text/plain; charset="UTF-8"'),
    ], "Hi Rep,\n\nTuesday at 2 works for me.\n\nAlice\n\n" + ORIGINAL_TEXT)
    b = "xYzZY1a2b3c4d5e6f7a8b9c0sendgridraw"
    reqs["reply_raw"] = request(p, {"Authorization": auth, "Content-Type": f"multipart/form-data; boundary={b}"},
                                multipart(b, [
                                    ("dkim", "{@gmail.com : pass}"),
                                    ("email", raw),
                                    ("to", f"{REP_NAME} <{REP}>"),
                                    ("from", f"{ALICE_NAME} <{ALICE}>"),
                                    ("sender_ip", "209.85.223.169"),
                                    ("envelope", envelope),
                                    ("subject", "Re: " + SUBJECT),
                                    ("charsets", compact({"to": "UTF-8", "subject": "UTF-8", "from": "UTF-8"})),
                                    ("SPF", "pass"),
                                ]))

    # Parsed fields, the "Example Default Payload" of that sendgrid/docs page, with `text` and
    # `html` in ISO-8859-1 as `charsets` says (django-anymail's captured charset case,
    # test_sendgrid_inbound.py test_inbound_charsets): not UTF-8 → body_base64.
    headers = (
        "Received: by mx0047p1mdw1.sendgrid.net with SMTP id 8Bc4dE0fG2 Thu, 15 Jan 2026 11:59:55 +0000 (UTC)\n"
        "MIME-Version: 1.0\n"
        f"From: {ALICE_NAME} <{ALICE}>\n"
        "Date: Thu, 15 Jan 2026 11:59:53 +0000\n"
        "Message-ID: <CAJx8A1iceSgParsed0002@mail.gmail.com>\n"
        f"In-Reply-To: {THREAD}\n"
        f"References: {THREAD}\n"
        f"Subject: Re: {SUBJECT}\n"
        f"To: {REP_NAME} <{REP}>\n"
        "Content-Type: multipart/alternative; boundary=\"000000000000c0ffee00a11ce002\"\n"
    )
    text = ("Merci Rep, ça me va très bien : mardi à 14 h.\n\nAlice\n\n" + ORIGINAL_TEXT).encode("iso-8859-1")
    html = "<div>Merci Rep, ça me va très bien : mardi à 14 h.</div><div>Alice</div>".encode("iso-8859-1")
    charsets = compact({"to": "UTF-8", "html": "iso-8859-1", "subject": "UTF-8", "from": "UTF-8",
                        "text": "iso-8859-1"})
    parsed_fields = [
        ("headers", headers),
        ("dkim", "{@gmail.com : pass}"),
        ("to", f"{REP_NAME} <{REP}>"),
        ("html", html),
        ("from", f"{ALICE_NAME} <{ALICE}>"),
        ("text", text),
        ("sender_ip", "209.85.223.169"),
        ("envelope", envelope),
        ("attachments", "0"),
        ("subject", "Re: " + SUBJECT),
        ("charsets", charsets),
        ("SPF", "pass"),
    ]
    b = "xYzZY9f8e7d6c5b4a3sendgridparsed"
    reqs["reply_parsed"] = request(p, {"Authorization": auth, "Content-Type": f"multipart/form-data; boundary={b}"},
                                   multipart(b, parsed_fields))

    # Broken multipart: the same kind of post cut off inside the `text` field, so the closing
    # boundary never comes (UTF-8 this time, so it stays a `body`).
    b = "xYzZY0a1b2c3d4e5f6sendgridbroken"
    whole = multipart(b, [
        ("headers", headers.replace("CAJx8A1iceSgParsed0002", "CAJx8A1iceSgBroken0003")),
        ("to", f"{REP_NAME} <{REP}>"),
        ("from", f"{ALICE_NAME} <{ALICE}>"),
        ("text", "Hi Rep,\n\nTuesday works. See you then.\n\nAlice\n"),
        ("envelope", envelope),
        ("subject", "Re: " + SUBJECT),
        ("charsets", compact({"to": "UTF-8", "subject": "UTF-8", "from": "UTF-8", "text": "UTF-8"})),
    ])
    cut = whole.index(b"Tuesday works.")
    reqs["malformed"] = request(p, {"Authorization": auth, "Content-Type": f"multipart/form-data; boundary={b}"},
                                whole[:cut])

    return {"provider": "sendgrid", "secret": SECRETS["sendgrid"], "signed_at": SIGNED_AT,
            "provider_message_ids": {}, "requests": reqs}


# --- SendGrid Event Webhook -----------------------------------------------------------------

# sendgrid-python's test/unit/test_eventwebhook.py, byte for byte (the trailing CRLF is signed too).
SG_VECTOR_KEY = ("MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g==")
SG_VECTOR_SIGNATURE = "MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM="
SG_VECTOR_TIMESTAMP = "1600112502"
SG_VECTOR_PAYLOAD = (
    '[{"email":"hello@world.com","event":"dropped","reason":"Bounced Address","sg_event_id":'
    '"ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA","sg_message_id":'
    '"LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0","smtp-id":'
    '"<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>","timestamp":1600112492}]\r\n'
)


def sendgrid_key() -> ec.EllipticCurvePrivateKey:
    """The Event Webhook's signing key, derived from a fixed label: the same key every run."""
    n = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551  # P-256's order
    value = int.from_bytes(digest("nudge sendgrid-events test key 1"), "big") % (n - 1) + 1
    return ec.derive_private_key(value, ec.SECP256R1())


def public_b64(key: ec.EllipticCurvePrivateKey) -> str:
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(der).decode()


def sendgrid_events() -> dict:
    key = sendgrid_key()
    p = path("/webhooks/email/sendgrid/events")
    ts = str(SIGNED_AT)
    reqs = {}

    def signed(case: str, payload) -> dict:
        body = (payload if isinstance(payload, str) else compact(payload)).encode() + b"\r\n"
        sig = key.sign(ts.encode() + body, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
        return request(p, {"Content-Type": "application/json",
                           "X-Twilio-Email-Event-Webhook-Signature": base64.b64encode(sig).decode(),
                           "X-Twilio-Email-Event-Webhook-Timestamp": ts}, body)

    serial = iter(range(10994920, 10995000))

    def ev(kind: str, who: str, at: int, **extra) -> dict:
        msg = SENDGRID_IDS[who]
        email = ALICE if who == "alice" else BOB
        e = {"email": email, "timestamp": at,
             "smtp-id": f"<{msg}@ismtpd0039p1iad1.sendgrid.net>", "event": kind, "category": ["outreach"],
             "sg_event_id": base64.urlsafe_b64encode(f"{kind[:5]}-{next(serial)}-{msg}-0".encode()).decode().rstrip("="),
             "sg_message_id": f"{msg}.filterdrecv-7bc4b97d7d-9kx2z-1-6968D2A0-2A.0"}
        e.update(extra)
        return e

    # The sample of sendgrid/docs content/docs/for-developers/tracking-events/event.md, one event a
    # request, for alice.
    reqs["bounce"] = signed("bounce", [ev("bounce", "alice", 1768478390, ip="168.1.1.1", tls=1,
                                          reason="550 5.1.1 The email account that you tried to reach does not exist.",
                                          status="5.1.1", type="bounce", bounce_classification="Invalid Address")])
    # sendgrid.rs: a `bounce` of `type` `blocked` is the temporary one.
    reqs["blocked"] = signed("blocked", [ev("bounce", "alice", 1768478391, ip="168.1.1.1", tls=1,
                                            reason="421 4.7.0 Try again later, closing connection.",
                                            status="4.7.0", type="blocked", bounce_classification="Reputation")])
    reqs["dropped"] = signed("dropped", [ev("dropped", "alice", 1768478392, reason="Bounced Address", status="5.0.0")])
    reqs["deferred"] = signed("deferred", [ev("deferred", "alice", 1768478393, ip="168.1.1.1", tls=1, attempt="1",
                                              response="400 4.2.2 Mailbox full, try again later")])
    reqs["spamreport"] = signed("spamreport", [ev("spamreport", "alice", 1768478394)])
    reqs["unsubscribe"] = signed("unsubscribe", [ev("unsubscribe", "alice", 1768478395)])
    reqs["group_unsubscribe"] = signed("group_unsubscribe", [ev("group_unsubscribe", "alice", 1768478396,
                                                                asm_group_id=10, ip="203.0.113.7",
                                                                useragent="Mozilla/5.0",
                                                                url="https://acme.example/unsubscribe")])
    reqs["open"] = signed("open", [ev("open", "alice", 1768478397, ip="203.0.113.7", useragent="Mozilla/5.0",
                                      sg_machine_open=False)])
    reqs["batch"] = signed("batch", [
        ev("processed", "bob", 1768478380, pool={"name": "outreach", "id": 210}),
        ev("delivered", "bob", 1768478381, ip="168.1.1.1", tls=1, response="250 2.0.0 OK"),
        ev("bounce", "bob", 1768478398, ip="168.1.1.1", tls=1, reason="550 5.1.1 No such user", status="5.1.1",
           type="bounce", bounce_classification="Invalid Address"),
        ev("open", "alice", 1768478399, ip="203.0.113.7", useragent="Mozilla/5.0", sg_machine_open=False),
    ])
    # Signed, but one event object instead of the JSON array sendgrid.rs requires: 422.
    reqs["malformed"] = signed("malformed", ev("bounce", "alice", 1768478399, status="5.1.1", type="bounce",
                                               reason="550 5.1.1 No such user"))

    return {"provider": "sendgrid-events", "secret": public_b64(key), "signed_at": SIGNED_AT,
            "provider_message_ids": SENDGRID_IDS, "requests": reqs}


def sendgrid_vector() -> dict:
    if not EventWebhook(SG_VECTOR_KEY).verify_signature(SG_VECTOR_PAYLOAD, SG_VECTOR_SIGNATURE, SG_VECTOR_TIMESTAMP):
        raise SystemExit("sendgrid-python's own test vector does not verify: SG_VECTOR_* differ from its "
                         "test/unit/test_eventwebhook.py")
    return {"provider": "sendgrid-events", "secret": SG_VECTOR_KEY, "signed_at": int(SG_VECTOR_TIMESTAMP),
            "provider_message_ids": {"hello": "LRzXl_NHStOGhQ4kofSm_A"},
            "requests": {"dropped": request(path("/webhooks/email/sendgrid/events"), {
                "Content-Type": "application/json",
                "X-Twilio-Email-Event-Webhook-Signature": SG_VECTOR_SIGNATURE,
                "X-Twilio-Email-Event-Webhook-Timestamp": SG_VECTOR_TIMESTAMP,
            }, SG_VECTOR_PAYLOAD.encode())}}


# --- Postmark -------------------------------------------------------------------------------


def postmark() -> dict:
    inbound = path("/webhooks/email/postmark")
    events = path("/webhooks/email/postmark/events")
    headers = {"Authorization": basic(SECRETS["postmark"]), "Content-Type": "application/json"}
    reqs = {}
    inbound_address = "4c1a2b3c0d9e8f7a6b5c4d3e2f1a0b9c@inbound.postmarkapp.com"

    # Postmark's inbound webhook example (postmarkapp.com/developer/webhooks/inbound-webhook, which
    # django-anymail's tests/test_postmark_inbound.py follows), a reply from alice.
    reqs["reply"] = request(inbound, headers, compact({
        "FromName": ALICE_NAME, "MessageStream": "inbound", "From": ALICE,
        "FromFull": {"Email": ALICE, "Name": ALICE_NAME, "MailboxHash": ""},
        "To": f"\"{REP_NAME}\" <{REP}>",
        "ToFull": [{"Email": REP, "Name": REP_NAME, "MailboxHash": ""}],
        "Cc": "", "CcFull": [], "Bcc": "", "BccFull": [],
        "OriginalRecipient": inbound_address, "Subject": "Re: " + SUBJECT,
        "MessageID": "73e6d360-66eb-11e1-8e72-a8904824019b", "ReplyTo": "", "MailboxHash": "",
        "Date": "Thu, 15 Jan 2026 11:59:35 +0000",
        "TextBody": "Hi Rep,\n\nTuesday at 2 is fine.\n\nAlice\n\n" + ORIGINAL_TEXT,
        "HtmlBody": "<html><body><p>Hi Rep,</p><p>Tuesday at 2 is fine.</p><p>Alice</p></body></html>",
        "StrippedTextReply": "Hi Rep,\n\nTuesday at 2 is fine.\n\nAlice", "Tag": "",
        "Headers": [
            {"Name": "Return-Path", "Value": f"<{ALICE}>"},
            {"Name": "Received", "Value": "by p-pm-inboundg03a-aws-useast1a.inbound.postmarkapp.com (Postfix, from userid 996) id 4F1A2B3C4D; Thu, 15 Jan 2026 11:59:36 +0000 (UTC)"},
            {"Name": "X-Spam-Checker-Version", "Value": "SpamAssassin 3.4.0 (2014-02-07) on p-pm-inboundg03a-aws-useast1a"},
            {"Name": "X-Spam-Status", "Value": "No"},
            {"Name": "X-Spam-Score", "Value": "-0.1"},
            {"Name": "X-Spam-Tests", "Value": "DKIM_SIGNED,DKIM_VALID,DKIM_VALID_AU,SPF_PASS"},
            {"Name": "MIME-Version", "Value": "1.0"},
            {"Name": "Message-ID", "Value": "<CAJx8A1icePm0001@mail.gmail.com>"},
            {"Name": "In-Reply-To", "Value": THREAD},
            {"Name": "References", "Value": THREAD},
        ],
        "Attachments": [],
    }).encode())
    # JSON without `From`, `FromFull` or `Headers`, which postmark.rs requires: 422.
    reqs["malformed"] = request(inbound, headers, compact({
        "MessageStream": "inbound", "Subject": "Re: " + SUBJECT, "TextBody": "Tuesday works.",
        "MessageID": "5d1e2f3a-0b4c-4d5e-8f6a-7b8c9d0e1f2a"}).encode())

    # Bounce webhook: the sample in django-anymail's tests/test_postmark_webhooks.py.
    def bounce(case: str, bid: int, kind: str, code: int, name: str, description: str, details: str, inactive: bool,
               record="Bounce"):
        return request(events, headers, compact({
            "RecordType": record, "MessageStream": "outbound", "ID": bid, "Type": kind, "TypeCode": code, "Name": name,
            "Tag": "outreach", "MessageID": POSTMARK_IDS["alice"], "Metadata": {}, "ServerID": 23,
            "Description": description, "Details": details, "Email": ALICE, "From": REP,
            "BouncedAt": "2026-01-15T11:59:58.0000000Z", "DumpAvailable": True, "Inactive": inactive,
            "CanActivate": True, "Subject": SUBJECT}).encode())

    reqs["bounce_hard"] = bounce("bounce_hard", 4323372036, "HardBounce", 1, "Hard bounce",
                                 "The server was unable to deliver your message (ex: unknown user, mailbox not found).",
                                 "smtp;550 5.1.1 The email account that you tried to reach does not exist.", True)
    reqs["bounce_soft"] = bounce("bounce_soft", 4323372037, "SoftBounce", 4096, "Soft bounce/Undeliverable",
                                 "Unable to temporarily deliver this email.",
                                 "smtp;452 4.2.2 The email account that you tried to reach is over quota.", False)
    reqs["spam_complaint"] = bounce("spam_complaint", 4323372038, "SpamComplaint", 512, "Spam complaint",
                                    "The subscriber explicitly marked this message as spam.",
                                    "Test spam complaint details", True, record="SpamComplaint")
    # SubscriptionChange, the shape of Postmark's sample
    # (postmarkapp.com/developer/webhooks/subscription-change-webhook): alice unsubscribed
    # through the link (ManualSuppression by the Recipient).
    reqs["subscription_change"] = request(events, headers, compact({
        "RecordType": "SubscriptionChange", "MessageID": POSTMARK_IDS["alice"], "ServerID": 23,
        "MessageStream": "outbound", "ChangedAt": "2026-01-15T11:59:59.0000000Z", "Recipient": ALICE,
        "Origin": "Recipient", "SuppressSending": True, "SuppressionReason": "ManualSuppression",
        "Tag": "outreach", "Metadata": {}}).encode())
    reqs["delivery"] = request(events, headers, compact({
        "RecordType": "Delivery", "ServerID": 23, "MessageStream": "outbound", "MessageID": POSTMARK_IDS["alice"],
        "Recipient": ALICE, "Tag": "outreach", "DeliveredAt": "2026-01-15T11:59:57.0000000Z",
        "Details": "Test delivery webhook details", "Metadata": {}}).encode())
    # A Bounce without `Email`: 422 naming it.
    reqs["events_malformed"] = request(events, headers, compact({
        "RecordType": "Bounce", "MessageStream": "outbound", "ID": 4323372039, "Type": "HardBounce", "TypeCode": 1,
        "MessageID": POSTMARK_IDS["alice"], "ServerID": 23, "BouncedAt": "2026-01-15T11:59:58.0000000Z"}).encode())

    return {"provider": "postmark", "secret": SECRETS["postmark"], "signed_at": SIGNED_AT,
            "provider_message_ids": POSTMARK_IDS, "requests": reqs}


# --- Amazon SES through SNS -----------------------------------------------------------------


def ses_key_and_cert():
    """The RSA-2048 key and self-signed certificate SNS fixtures are signed with: made once (the
    key is random), then read from the committed files. The certificate is rebuilt from the key
    only when its file is missing (PKCS#1 v1.5 is deterministic: the same bytes)."""
    os.makedirs(SES_DIR, exist_ok=True)
    if os.path.exists(SES_KEY):
        with open(SES_KEY, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
    else:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        with open(SES_KEY, "wb") as f:
            f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
    if not os.path.exists(SES_CERT):
        name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "nudge test fixtures (not Amazon)"),
                          x509.NameAttribute(NameOID.COMMON_NAME, "sns.amazonaws.com")])
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(0x6E75646765).not_valid_before(dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc))
                .not_valid_after(dt.datetime(2035, 1, 1, tzinfo=dt.timezone.utc))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName("sns.amazonaws.com")]), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .sign(key, hashes.SHA256()))
        with open(SES_CERT, "wb") as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(SES_CERT, "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    if cert.public_key().public_numbers() != key.public_key().public_numbers():
        raise SystemExit(f"{SES_CERT} is not the certificate of {SES_KEY}: delete the certificate to rebuild it")
    return key, cert


# aws-php-sns-message-validator's order (src/MessageValidator.php): the keys signed, when present.
SNS_NOTIFICATION_KEYS = ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
SNS_CONFIRMATION_KEYS = ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"]


def sns_string_to_sign(m: dict) -> bytes:
    keys = SNS_NOTIFICATION_KEYS if m["Type"] == "Notification" else SNS_CONFIRMATION_KEYS
    return "".join(f"{k}\n{m[k]}\n" for k in keys if k in m).encode()


def ses() -> dict:
    key, _ = ses_key_and_cert()
    p = path("/webhooks/email/ses")
    subscription_arn = SES_TOPIC + ":6b1f6a2c-4d3e-4f5a-8b9c-0d1e2f3a4b5c"
    reqs = {}

    def sign(m: dict, version: str) -> dict:
        m["SignatureVersion"] = version
        h = hashes.SHA1() if version == "1" else hashes.SHA256()
        m["Signature"] = base64.b64encode(key.sign(sns_string_to_sign(m), padding.PKCS1v15(), h)).decode()
        return m

    def envelope(case: str, kind: str, message: str, version: str, topic=SES_TOPIC, cert_url=SNS_CERT_URL) -> dict:
        # SNS's JSON, in its key order (docs.aws.amazon.com/sns/latest/dg/http-notification-json.html,
        # …/http-subscription-confirmation-json.html).
        mid = uuid_id(f"sns message {case}")
        m = {"Type": kind, "MessageId": mid}
        if kind != "Notification":
            m["Token"] = hex_id(f"sns token {case}", 64) * 2
        m["TopicArn"] = topic
        m["Message"] = message
        if kind != "Notification":
            m["SubscribeURL"] = ("https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn="
                                 f"{topic}&Token={m['Token']}")
        m["Timestamp"] = SIGNED_AT_ISO
        sign(m, version)
        ordered = {k: m[k] for k in ["Type", "MessageId", "Token", "TopicArn", "Message", "SubscribeURL",
                                     "Timestamp", "SignatureVersion", "Signature"] if k in m}
        ordered["SigningCertURL"] = cert_url
        headers = {"Content-Type": "text/plain; charset=UTF-8", "User-Agent": "Amazon Simple Notification Service Agent",
                   "x-amz-sns-message-type": kind, "x-amz-sns-message-id": mid, "x-amz-sns-topic-arn": topic}
        if kind == "Notification":
            ordered["UnsubscribeURL"] = ("https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn="
                                         + subscription_arn)
            headers["x-amz-sns-subscription-arn"] = subscription_arn
        if kind == "UnsubscribeConfirmation":
            headers["x-amz-sns-subscription-arn"] = subscription_arn
        body = json.dumps(ordered, indent=2, separators=(",", " : ")).encode()
        return request(p, headers, body)

    def confirm_text(topic):
        return (f"You have chosen to subscribe to the topic {topic}.\n"
                "To confirm the subscription, visit the SubscribeURL included in this message.")

    reqs["subscription_confirmation"] = envelope("subscription_confirmation", "SubscriptionConfirmation",
                                                 confirm_text(SES_TOPIC), "1")
    reqs["subscription_other_topic"] = envelope("subscription_other_topic", "SubscriptionConfirmation",
                                                confirm_text(SES_OTHER_TOPIC), "1", topic=SES_OTHER_TOPIC)
    reqs["unsubscribe_confirmation"] = envelope(
        "unsubscribe_confirmation", "UnsubscribeConfirmation",
        f"You have chosen to deactivate subscription {subscription_arn}.\nTo cancel this operation and restore "
        "the subscription, visit the SubscribeURL included in this message.", "1")

    # SES's own notification examples (docs.aws.amazon.com/ses/latest/dg/notification-examples.html,
    # as django-anymail's tests/test_amazon_ses_webhooks.py copies them), for alice's message.
    mail = {
        "timestamp": "2026-01-15T11:59:55.000Z", "source": REP,
        "sourceArn": "arn:aws:ses:us-east-1:123456789012:identity/acme.example", "sourceIp": "203.0.113.10",
        "callerIdentity": "nudge-crm", "sendingAccountId": "123456789012", "messageId": SES_IDS["alice"],
        "destination": [ALICE], "headersTruncated": False,
        "headers": [{"name": "From", "value": f"{REP_NAME} <{REP}>"}, {"name": "To", "value": ALICE},
                    {"name": "Subject", "value": SUBJECT},
                    {"name": "Message-ID", "value": f"<{SES_IDS['alice']}@email.amazonses.com>"}],
        "commonHeaders": {"from": [f"{REP_NAME} <{REP}>"], "date": "Thu, 15 Jan 2026 11:59:55 +0000",
                          "to": [ALICE], "messageId": f"<{SES_IDS['alice']}@email.amazonses.com>",
                          "subject": SUBJECT},
    }

    def bounce(bounce_type: str, sub: str, status: str, diag: str, fid: str) -> dict:
        return {"bounceType": bounce_type, "bounceSubType": sub,
                "bouncedRecipients": [{"emailAddress": ALICE, "action": "failed", "status": status,
                                       "diagnosticCode": diag}],
                "timestamp": "2026-01-15T11:59:58.000Z", "feedbackId": fid,
                "remoteMtaIp": "127.0.2.0", "reportingMTA": "dsn; a8-70.smtp-out.amazonses.com"}

    reqs["bounce_permanent"] = envelope("bounce_permanent", "Notification", compact({
        "notificationType": "Bounce",
        "bounce": bounce("Permanent", "General", "5.1.1", "smtp; 550 5.1.1 user unknown",
                         "010f019bc1e2d3a5-b0c1d2e3-1111-4aaa-8bbb-000000000001-000000"),
        "mail": mail}), "1")
    # The configuration-set schema (`eventType`), as AWS's event-publishing examples.
    reqs["bounce_transient"] = envelope("bounce_transient", "Notification", compact({
        "eventType": "Bounce",
        "bounce": bounce("Transient", "MailboxFull", "4.2.2", "smtp; 452 4.2.2 mailbox full",
                         "010f019bc1e2d3a6-b0c1d2e3-2222-4aaa-8bbb-000000000002-000000"),
        "mail": {**mail, "tags": {"ses:configuration-set": ["nudge"]}}}), "2")
    reqs["complaint"] = envelope("complaint", "Notification", compact({
        "notificationType": "Complaint",
        "complaint": {"userAgent": "ExampleCorp Feedback Loop (V0.01)", "complainedRecipients": [{"emailAddress": ALICE}],
                      "complaintFeedbackType": "abuse", "arrivalDate": "2026-01-15T11:59:57.000Z",
                      "timestamp": "2026-01-15T11:59:58.000Z",
                      "feedbackId": "010f019bc1e2d3a7-b0c1d2e3-3333-4aaa-8bbb-000000000003-000000"},
        "mail": mail}), "2")
    reqs["delivery"] = envelope("delivery", "Notification", compact({
        "eventType": "Delivery", "mail": {**mail, "tags": {"ses:configuration-set": ["nudge"]}},
        "delivery": {"timestamp": "2026-01-15T11:59:56.000Z", "processingTimeMillis": 546, "recipients": [ALICE],
                     "smtpResponse": "250 ok:  Message 64111812 accepted", "remoteMtaIp": "127.0.2.0",
                     "reportingMTA": "a8-70.smtp-out.amazonses.com"}}), "2")
    # AWS's Received example (receiving-email-notifications-examples.html) with the SNS action's
    # content: a new mail from alice, in no nudge thread.
    content = mime([
        ("Return-Path", f"<{ALICE}>"),
        ("Received", "from mail-yw1-f170.google.com (mail-yw1-f170.google.com [209.85.128.170]) by "
                     "inbound-smtp.us-east-1.amazonaws.com with SMTP id 0a1b2c3d4e5f for rep@acme.example; "
                     "Thu, 15 Jan 2026 11:59:50 +0000 (UTC)"),
        ("MIME-Version", "1.0"),
        ("From", f"{ALICE_NAME} <{ALICE}>"),
        ("Date", "Thu, 15 Jan 2026 11:59:49 +0000"),
        ("Message-ID", "<CAJx8A1iceSes0001@mail.gmail.com>"),
        ("Subject", "Pricing for 50 seats?"),
        ("To", REP),
        ("Content-Type", 'text/plain; charset="UTF-8"'),
    ], "Hi,\n\nwhat would 50 seats cost per year?\n\nAlice\n")
    reqs["received"] = envelope("received", "Notification", compact({
        "notificationType": "Received",
        "mail": {"timestamp": "2026-01-15T11:59:50.000Z", "source": ALICE, "messageId": "o3vrnil0e2ic28trm7dfhrc2v0nudgetest01",
                 "destination": [REP], "headersTruncated": False,
                 "headers": [{"name": "From", "value": f"{ALICE_NAME} <{ALICE}>"}, {"name": "To", "value": REP},
                             {"name": "Subject", "value": "Pricing for 50 seats?"}],
                 "commonHeaders": {"returnPath": ALICE, "from": [f"{ALICE_NAME} <{ALICE}>"],
                                   "date": "Thu, 15 Jan 2026 11:59:49 +0000", "to": [REP],
                                   "messageId": "<CAJx8A1iceSes0001@mail.gmail.com>",
                                   "subject": "Pricing for 50 seats?"}},
        "receipt": {"timestamp": "2026-01-15T11:59:50.000Z", "processingTimeMillis": 222, "recipients": [REP],
                    "spamVerdict": {"status": "PASS"}, "virusVerdict": {"status": "PASS"},
                    "spfVerdict": {"status": "PASS"}, "dkimVerdict": {"status": "PASS"},
                    "dmarcVerdict": {"status": "PASS"},
                    "action": {"type": "SNS", "topicArn": SES_TOPIC, "encoding": "UTF8"}},
        "content": content}), "2")
    # Signed, but the SES message has neither notificationType nor eventType: 422.
    reqs["malformed"] = envelope("malformed", "Notification", compact({"mail": mail}), "2")
    # Signed with the same key, but the certificate is said to be elsewhere: refused before
    # anything is fetched.
    reqs["cert_elsewhere"] = envelope("cert_elsewhere", "Notification", compact({
        "notificationType": "Bounce",
        "bounce": bounce("Permanent", "General", "5.1.1", "smtp; 550 5.1.1 user unknown",
                         "010f019bc1e2d3a8-b0c1d2e3-4444-4aaa-8bbb-000000000004-000000"),
        "mail": mail}), "2", cert_url=SNS_EVIL_CERT_URL)

    return {"provider": "ses", "secret": SECRETS["ses"], "signed_at": SIGNED_AT,
            "provider_message_ids": SES_IDS, "requests": reqs}


# --- Twilio ---------------------------------------------------------------------------------


def twilio() -> dict:
    validator = RequestValidator(SECRETS["twilio"])
    status_path = path("/webhooks/sms/twilio/status")
    call_path = path("/webhooks/call/twilio")
    reqs = {}

    def signed(p: str, params: dict) -> dict:
        pairs = sorted(params.items())
        sig = validator.compute_signature(PUBLIC_URL + p, dict(pairs))
        return request(p, {"Content-Type": "application/x-www-form-urlencoded", "X-Twilio-Signature": sig},
                       urlencoded(pairs))

    # Message status callbacks: the parameters Twilio's guide lists
    # (twilio.com/docs/messaging/guides/track-outbound-message-status).
    def status(sid: str, to: str, st: str, **extra) -> dict:
        params = {"AccountSid": TWILIO_ACCOUNT_SID, "ApiVersion": "2010-04-01", "From": TWILIO_NUMBER,
                  "MessageSid": sid, "MessageStatus": st, "SmsSid": sid, "SmsStatus": st, "To": to}
        params.update(extra)
        return signed(status_path, params)

    reqs["status_delivered"] = status(TWILIO_IDS["bob"], BOB_PHONE, "delivered")
    reqs["status_undelivered"] = status(TWILIO_IDS["alice"], ALICE_PHONE, "undelivered", ErrorCode="30003")
    reqs["status_opted_out"] = status(TWILIO_IDS["alice_opted_out"], ALICE_PHONE, "failed", ErrorCode="21610")
    # Signed, but with no MessageSid (nor SmsSid), which twilio.rs requires: 422.
    reqs["status_malformed"] = signed(status_path, {
        "AccountSid": TWILIO_ACCOUNT_SID, "ApiVersion": "2010-04-01", "ErrorCode": "30008", "From": TWILIO_NUMBER,
        "MessageStatus": "failed", "To": ALICE_PHONE})

    # Voice call status callbacks: the parameters of twilio.com/docs/usage/webhooks/voice-webhooks
    # (call status callbacks) and twilio.com/docs/voice/answering-machine-detection (AnsweredBy).
    seq = iter(range(1, 100))

    def call(case: str, st: str, to=ALICE_PHONE, **extra) -> dict:
        sid = "CA" + hex_id(f"twilio call {case}", 32)
        params = {"AccountSid": TWILIO_ACCOUNT_SID, "ApiVersion": "2010-04-01", "CallSid": sid, "CallStatus": st,
                  "CallbackSource": "call-progress-events", "Called": to, "Caller": TWILIO_NUMBER,
                  "Direction": "outbound-api", "From": TWILIO_NUMBER, "SequenceNumber": str(next(seq)),
                  "Timestamp": "Thu, 15 Jan 2026 12:00:00 +0000", "To": to}
        params.update(extra)
        return signed(call_path, params)

    reqs["call_completed_long"] = call("call_completed_long", "completed", CallDuration="95", AnsweredBy="human")
    reqs["call_completed_short"] = call("call_completed_short", "completed", CallDuration="12")
    reqs["call_no_answer"] = call("call_no_answer", "no-answer", CallDuration="0")
    reqs["call_busy"] = call("call_busy", "busy", CallDuration="0")
    reqs["call_voicemail"] = call("call_voicemail", "completed", CallDuration="40", AnsweredBy="machine_end_beep")
    reqs["call_failed"] = call("call_failed", "failed", CallDuration="0")
    reqs["call_ringing"] = call("call_ringing", "ringing")
    # Signed, without CallStatus, which twilio.rs requires: what an asynchronous AMD callback
    # (AsyncAmdStatusCallback) posts, pointed at the status URL: 422.
    reqs["call_malformed"] = signed(call_path, {
        "AccountSid": TWILIO_ACCOUNT_SID, "AnsweredBy": "machine_start",
        "CallSid": "CA" + hex_id("twilio call call_malformed", 32), "MachineDetectionDuration": "2075"})

    return {"provider": "twilio", "secret": SECRETS["twilio"], "signed_at": SIGNED_AT,
            "provider_message_ids": TWILIO_IDS, "requests": reqs}


# --- Calendly -------------------------------------------------------------------------------


def calendly() -> dict:
    p = path("/webhooks/calendar/calendly")
    reqs = {}

    def signed(doc: dict) -> dict:
        body = compact(doc).encode()
        v1 = hmac.new(SECRETS["calendly"].encode(), f"{SIGNED_AT}.".encode() + body, hashlib.sha256).hexdigest()
        return request(p, {"Content-Type": "application/json",
                           "Calendly-Webhook-Signature": f"t={SIGNED_AT},v1={v1}"}, body)

    api = "https://api.calendly.com"
    rep_user = f"{api}/users/REPUSER000000001"
    ev1, inv1 = "A11CEEVENT000001", "A11CEINVITEE0001"
    ev2, inv2 = "A11CEEVENT000002", "A11CEINVITEE0002"

    def invitee(ev: str, inv: str, start: str, end: str, status="active", **extra) -> dict:
        # Calendly's v2 invitee.created example (developer.calendly.com's webhook docs), with the
        # scheduled_event block its current docs add.
        d = {
            "cancel_url": f"https://calendly.com/cancellations/{inv}", "created_at": "2026-01-15T11:59:58.000000Z",
            "email": ALICE, "event": f"{api}/scheduled_events/{ev}", "first_name": "Alice", "last_name": "Example",
            "name": ALICE_NAME, "new_invitee": None, "no_show": None, "old_invitee": None, "payment": None,
            "questions_and_answers": [{"answer": "Pricing for 50 seats", "position": 0,
                                       "question": "What would you like to discuss?"}],
            "reconfirmation": None, "reschedule_url": f"https://calendly.com/reschedulings/{inv}",
            "rescheduled": False, "routing_form_submission": None, "status": status, "text_reminder_number": None,
            "timezone": "America/Los_Angeles",
            "tracking": {"utm_campaign": None, "utm_source": None, "utm_medium": None, "utm_content": None,
                         "utm_term": None, "salesforce_uuid": None},
            "updated_at": "2026-01-15T11:59:58.000000Z", "uri": f"{api}/scheduled_events/{ev}/invitees/{inv}",
            "scheduled_event": {
                "uri": f"{api}/scheduled_events/{ev}", "name": "30 Minute Meeting", "status": status,
                "start_time": start, "end_time": end, "event_type": f"{api}/event_types/REPEVENTTYPE0001",
                "location": {"type": "google_conference", "status": "pushed",
                             "join_url": "https://meet.google.com/abc-defg-hij"},
                "invitees_counter": {"total": 1, "active": 1 if status == "active" else 0, "limit": 1},
                "created_at": "2026-01-15T11:59:58.000000Z", "updated_at": "2026-01-15T11:59:58.000000Z",
                "event_memberships": [{"user": rep_user, "user_email": REP, "user_name": REP_NAME}],
                "event_guests": []},
        }
        d.update(extra)
        return d

    def hook(event: str, payload) -> dict:
        doc = {"created_at": "2026-01-15T11:59:59.000000Z", "created_by": rep_user, "event": event}
        if payload is not None:
            doc["payload"] = payload
        return doc

    first = ("2026-01-20T22:00:00.000000Z", "2026-01-20T22:30:00.000000Z")
    moved = ("2026-01-22T22:00:00.000000Z", "2026-01-22T22:30:00.000000Z")
    cancellation = {"canceled_by": ALICE_NAME, "reason": "Something came up", "canceler_type": "invitee",
                    "created_at": "2026-01-15T11:59:59.000000Z"}
    reqs["invitee_created"] = signed(hook("invitee.created", invitee(ev1, inv1, *first)))
    c = invitee(ev1, inv1, *first, status="canceled", cancellation=cancellation)
    c["scheduled_event"]["cancellation"] = cancellation
    reqs["invitee_canceled"] = signed(hook("invitee.canceled", c))
    # A reschedule, as Calendly sends it ("See how webhook payloads change when invitees
    # reschedule events"): invitee.canceled of the old invitee with `rescheduled: true` and
    # `new_invitee` (ignored by calendar.rs), then invitee.created of the new one with
    # `old_invitee` (a Rescheduled change).
    old_uri, new_uri = f"{api}/scheduled_events/{ev1}/invitees/{inv1}", f"{api}/scheduled_events/{ev2}/invitees/{inv2}"
    r = invitee(ev1, inv1, *first, status="canceled", rescheduled=True, new_invitee=new_uri,
                cancellation={**cancellation, "reason": "Rescheduled"})
    reqs["reschedule_canceled"] = signed(hook("invitee.canceled", r))
    reqs["reschedule_created"] = signed(hook("invitee.created", invitee(ev2, inv2, *moved, old_invitee=old_uri)))
    # An event calendar.rs knows but does not act on: 2xx ignored.
    reqs["unknown_event"] = signed(hook("invitee_no_show.created", {
        "uri": f"{api}/invitee_no_shows/A11CENOSHOW00001", "invitee": old_uri,
        "created_at": "2026-01-15T11:59:59.000000Z"}))
    # Signed, without `payload`: 422 naming `payload.uri`.
    reqs["malformed"] = signed(hook("invitee.created", None))

    return {"provider": "calendly", "secret": SECRETS["calendly"], "signed_at": SIGNED_AT,
            "provider_message_ids": {}, "requests": reqs}


# --- Cal.com --------------------------------------------------------------------------------


def calcom() -> dict:
    p = path("/webhooks/calendar/calcom")
    reqs = {}

    def signed(doc: dict) -> dict:
        body = compact(doc).encode()
        sig = hmac.new(SECRETS["calcom"].encode(), body, hashlib.sha256).hexdigest()
        return request(p, {"Content-Type": "application/json", "X-Cal-Signature-256": sig,
                           "X-Cal-Webhook-Version": "2021-10-20"}, body)

    organizer = {"id": 5, "name": REP_NAME, "email": REP, "username": "rep", "timeZone": "America/Los_Angeles",
                 "language": {"locale": "en"}, "timeFormat": "h:mma", "utcOffset": -480}
    attendee = {"email": ALICE, "name": ALICE_NAME, "firstName": "", "lastName": "",
                "timeZone": "America/Los_Angeles", "language": {"locale": "en"}, "utcOffset": -480}
    uid1, uid2 = "a11ceBk0000000000000001", "a11ceBk0000000000000002"

    def booking(uid: str, booking_id: int, start: str, end: str, status="ACCEPTED", **extra) -> dict:
        # The example payload of Cal.com's docs/developing/guides/automation/webhooks.mdx
        # (calcom/cal.com).
        d = {"type": "30min", "title": f"30min between {REP_NAME} and {ALICE_NAME}", "description": "",
             "additionalNotes": "", "customInputs": {}, "startTime": start, "endTime": end,
             "organizer": organizer,
             "responses": {"name": {"label": "your_name", "value": ALICE_NAME},
                           "email": {"label": "email_address", "value": ALICE}},
             "userFieldsResponses": {}, "attendees": [attendee], "location": "integrations:daily",
             "eventTypeId": 7, "uid": uid, "eventTitle": "30min", "length": 30, "bookingId": booking_id,
             "metadata": {"videoCallUrl": f"https://app.cal.com/video/{uid}"}, "status": status}
        d.update(extra)
        return d

    def hook(trigger: str, payload: dict) -> dict:
        return {"triggerEvent": trigger, "createdAt": SIGNED_AT_ISO, "payload": payload}

    first = ("2026-01-21T17:00:00Z", "2026-01-21T17:30:00Z")
    moved = ("2026-01-23T17:00:00Z", "2026-01-23T17:30:00Z")
    reqs["booking_created"] = signed(hook("BOOKING_CREATED", booking(uid1, 91, *first)))
    # calendar.rs: the new booking's `uid` and the one it replaces in `rescheduleUid`.
    reqs["booking_rescheduled"] = signed(hook("BOOKING_RESCHEDULED", booking(
        uid2, 92, *moved, rescheduleUid=uid1, rescheduleId=91, rescheduleStartTime=first[0],
        rescheduleEndTime=first[1], rescheduledBy=ALICE)))
    reqs["booking_cancelled"] = signed(hook("BOOKING_CANCELLED", booking(
        uid1, 91, *first, status="CANCELLED", cancellationReason="Something came up", cancelledBy=ALICE)))
    # What Cal.com's "Ping test" button sends: a trigger nudge does not act on (2xx ignored).
    reqs["ping"] = signed(hook("PING", {
        "type": "Test", "title": "Test trigger event", "startTime": SIGNED_AT_ISO, "endTime": SIGNED_AT_ISO,
        "attendees": [{"email": "JohnDoe@example.com", "name": "John Doe", "timeZone": "Europe/London",
                       "language": {"locale": "en"}}],
        "organizer": {"name": "Cal", "email": "no-reply@cal.com", "timeZone": "Europe/London",
                      "language": {"locale": "en"}}}))
    # Signed (and with the `createdAt` the signature check reads), but without `uid` or
    # `attendees`: 422 naming `uid`.
    reqs["malformed"] = signed(hook("BOOKING_CREATED", {
        "type": "30min", "title": "30min", "startTime": first[0], "endTime": first[1], "organizer": organizer}))

    return {"provider": "calcom", "secret": SECRETS["calcom"], "signed_at": SIGNED_AT,
            "provider_message_ids": {}, "requests": reqs}


# --- self-check: every signature again, by another path --------------------------------------


def parse_form(req: dict) -> list:
    """The (name, value) fields of a form body (files left out), with the email package for
    multipart: what a receiver reads."""
    ctype = req["headers"]["Content-Type"]
    body = body_bytes(req)
    if ctype.startswith("application/x-www-form-urlencoded"):
        return urllib.parse.parse_qsl(body.decode(), keep_blank_values=True, strict_parsing=True)
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {ctype}\r\n\r\n".encode() + body)
    if msg.defects or any(part.defects for part in msg.iter_parts()):
        raise ValueError(f"broken multipart: {msg.defects}")
    out = []
    for part in msg.iter_parts():
        if part.get_filename() is None:
            out.append((part.get_param("name", header="content-disposition"),
                        part.get_payload(decode=True).decode("utf-8", "replace")))
    return out


def check(doc: dict) -> str:
    reqs = doc["requests"]
    provider = doc["provider"]
    seen = set()

    def once(key):
        if key in seen:
            raise SystemExit(f"{provider}: {key!r} is used by two cases")
        seen.add(key)

    for name, req in reqs.items():
        if "body_base64" in req:
            try:
                base64.b64decode(req["body_base64"]).decode("utf-8")
                raise SystemExit(f"{provider} {name}: body_base64 holds UTF-8; use `body`")
            except UnicodeDecodeError:
                pass
        if not req["path"].endswith(f"?account={ACCOUNT}"):
            raise SystemExit(f"{provider} {name}: the path has no ?account={ACCOUNT}")
    verified, how = 0, ""
    if provider == "mailgun":
        how = "mailgun.security.SecurityGuard.verify_webhook"
        for name, req in reqs.items():
            if req["headers"]["Content-Type"] == "application/json":
                sig = json.loads(req["body"])["signature"]
            else:
                sig = dict(parse_form(req))
            ok = SecurityGuard.verify_webhook(doc["secret"], sig["token"], sig["timestamp"], sig["signature"],
                                              max_age_seconds=0)
            if not ok or int(sig["timestamp"]) != doc["signed_at"]:
                raise SystemExit(f"mailgun {name}: the signature does not verify")
            once(sig["token"])
            verified += 1
            form = req["headers"]["Content-Type"].startswith("application/x-www-form-urlencoded")
            if name in ("reply", "reply_multipart", "auto_reply") and not (
                    ("%3CNUDGE_THREAD_ID%3E" in req["body"] and THREAD not in req["body"]) if form
                    else THREAD in req["body"]):
                raise SystemExit(f"mailgun {name}: the In-Reply-To placeholder is not as the test replaces it")
            if name == "dsn" and ("In-Reply-To" in req["body"] or "References" in req["body"]):
                raise SystemExit("mailgun dsn: a DSN here has no In-Reply-To or References")
    elif provider == "sendgrid":
        how = "Basic credentials; multipart read with the email package"
        for name, req in reqs.items():
            if base64.b64decode(req["headers"]["Authorization"].split()[1]).decode() != doc["secret"]:
                raise SystemExit(f"sendgrid {name}: wrong Basic credentials")
            try:
                fields = dict(parse_form(req))
                broken = False
            except ValueError:
                broken = True
            if broken != (name == "malformed"):
                raise SystemExit(f"sendgrid {name}: the multipart is {'broken' if broken else 'whole'}")
            if not broken:
                text = fields.get("email") or fields.get("headers")
                if "In-Reply-To: <NUDGE_THREAD_ID>" not in text:
                    raise SystemExit(f"sendgrid {name}: no In-Reply-To placeholder")
            verified += 1
    elif provider == "sendgrid-events":
        how = "sendgrid.helpers.eventwebhook.EventWebhook.verify_signature and cryptography"
        hook = EventWebhook(doc["secret"])
        der = base64.b64decode(doc["secret"])
        pub = serialization.load_der_public_key(der)
        for name, req in reqs.items():
            sig = req["headers"]["X-Twilio-Email-Event-Webhook-Signature"]
            ts = req["headers"]["X-Twilio-Email-Event-Webhook-Timestamp"]
            if int(ts) != doc["signed_at"] or not hook.verify_signature(req["body"], sig, ts):
                raise SystemExit(f"sendgrid-events {name}: the signature does not verify")
            try:
                pub.verify(base64.b64decode(sig), ts.encode() + body_bytes(req), ec.ECDSA(hashes.SHA256()))
            except InvalidSignature:
                raise SystemExit(f"sendgrid-events {name}: cryptography refuses the signature")
            events = json.loads(req["body"])
            for e in events if isinstance(events, list) else [events]:
                once(e["sg_event_id"])
            verified += 1
    elif provider == "postmark":
        how = "Basic credentials"
        for name, req in reqs.items():
            if base64.b64decode(req["headers"]["Authorization"].split()[1]).decode() != doc["secret"]:
                raise SystemExit(f"postmark {name}: wrong Basic credentials")
            json.loads(req["body"])
            verified += 1
    elif provider == "ses":
        how = "cryptography, AWS's string to sign, the committed certificate"
        with open(SES_CERT, "rb") as f:
            pub = x509.load_pem_x509_certificate(f.read()).public_key()
        for name, req in reqs.items():
            m = json.loads(req["body"])
            # aws-php-sns-message-validator's src/MessageValidator.php: its superset of keys, in
            # its order.
            keys = ["Message", "MessageId", "Subject", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"]
            s = "".join(f"{k}\n{m[k]}\n" for k in keys if k in m)
            h = hashes.SHA1() if m["SignatureVersion"] == "1" else hashes.SHA256()
            try:
                pub.verify(base64.b64decode(m["Signature"]), s.encode(), padding.PKCS1v15(), h)
            except InvalidSignature:
                raise SystemExit(f"ses {name}: the signature does not verify")
            if m["Timestamp"] != SIGNED_AT_ISO or req["headers"]["x-amz-sns-message-type"] != m["Type"]:
                raise SystemExit(f"ses {name}: wrong Timestamp or message type header")
            once(m["MessageId"])
            verified += 1
    elif provider == "twilio":
        how = "twilio.request_validator.RequestValidator.validate"
        validator = RequestValidator(doc["secret"])
        for name, req in reqs.items():
            params = dict(parse_form(req))
            if not validator.validate(PUBLIC_URL + req["path"], params, req["headers"]["X-Twilio-Signature"]):
                raise SystemExit(f"twilio {name}: the signature does not verify")
            once(params.get("CallSid", params.get("MessageSid", "")) + ":" +
                 params.get("CallStatus", params.get("MessageStatus", "")))
            verified += 1
    elif provider == "calendly":
        how = "hmac.compare_digest over t.body"
        for name, req in reqs.items():
            parts = dict(p.split("=", 1) for p in req["headers"]["Calendly-Webhook-Signature"].split(","))
            want = hmac.new(doc["secret"].encode(), (parts["t"] + "." + req["body"]).encode(), hashlib.sha256).hexdigest()
            if int(parts["t"]) != doc["signed_at"] or not hmac.compare_digest(want, parts["v1"]):
                raise SystemExit(f"calendly {name}: the signature does not verify")
            once(parts["v1"])
            verified += 1
    elif provider == "calcom":
        how = "hmac.compare_digest over the body; createdAt = signed_at"
        for name, req in reqs.items():
            want = hmac.new(doc["secret"].encode(), req["body"].encode(), hashlib.sha256).hexdigest()
            v = json.loads(req["body"])
            created = dt.datetime.fromisoformat(v["createdAt"].replace("Z", "+00:00")).timestamp()
            if not hmac.compare_digest(want, req["headers"]["X-Cal-Signature-256"]) or created != doc["signed_at"]:
                raise SystemExit(f"calcom {name}: the signature does not verify")
            once(f"{v['triggerEvent']}:{v['payload'].get('uid', name)}")
            verified += 1
    return f"{len(reqs)} requests, {verified} checked by {how}"


def render(doc: dict) -> bytes:
    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory and fail if a file on disk differs (writes nothing)")
    args = parser.parse_args()
    for package, version in PINNED.items():
        found = metadata.version(package)
        if found != version:
            print(f"need {package}=={version}, found {found}: "
                  "python3 -m pip install -r scripts/requirements-providers.txt", file=sys.stderr)
            return 1
    if args.check and not (os.path.exists(SES_KEY) and os.path.exists(SES_CERT)):
        print(f"{os.path.relpath(SES_KEY, ROOT)} or its certificate is missing: run without --check to make them",
              file=sys.stderr)
        return 1
    docs = {
        "mailgun": mailgun(), "sendgrid": sendgrid(), "sendgrid-events": sendgrid_events(),
        "sendgrid-vector": sendgrid_vector(), "postmark": postmark(), "ses": ses(), "twilio": twilio(),
        "calendly": calendly(), "calcom": calcom(),
    }
    os.makedirs(OUT_DIR, exist_ok=True)
    stale = []
    for name, doc in docs.items():
        out = os.path.join(OUT_DIR, f"{name}.json")
        data = render(doc)
        if args.check:
            with open(out, "rb") as f:
                if f.read() != data:
                    stale.append(out)
        else:
            with open(out, "wb") as f:
                f.write(data)
    # The self-check reads the files back, as the Rust test will.
    for name in docs:
        out = os.path.join(OUT_DIR, f"{name}.json")
        with open(out, encoding="utf-8") as f:
            summary = check(json.load(f))
        print(f"{os.path.relpath(out, ROOT)}: {summary}")
    if stale:
        print("differs from what this script makes: " + ", ".join(os.path.relpath(s, ROOT) for s in stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
