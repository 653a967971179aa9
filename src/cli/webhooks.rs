//! `nudge webhook-secret show`, `nudge provider-secret set` and `nudge twilio-token set`: what
//! webhooks are checked with (docs/service.md, docs/providers.md). The webhook secret is printed alone
//! on stdout so scripts can capture it; a provider's secret is never printed back.

use super::DatabaseArgs;
use crate::clock::{Clock, SystemClock};
use crate::inbound::providers::Provider;
use crate::store::accounts::DEFAULT_ACCOUNT_ID;
use crate::store::{provider_secrets, Db};
use anyhow::Context;
use clap::{Args, Subcommand};
use std::io::Read;

#[derive(Debug, Subcommand)]
pub enum WebhookSecretCommand {
    /// Print the account's webhook secret (signs `X-Nudge-Signature`).
    Show(AccountArgs),
}

#[derive(Debug, Subcommand)]
pub enum ProviderSecretCommand {
    /// Set (or with `--clear`, remove) what a provider's webhooks are checked with. `-` reads
    /// the secret from stdin, so it stays out of the shell history.
    Set(SetProviderSecretArgs),
}

#[derive(Debug, Subcommand)]
pub enum TwilioTokenCommand {
    /// Set the account's Twilio auth token (checks `X-Twilio-Signature`); the same as
    /// `nudge provider-secret set twilio`. `-` reads it from stdin.
    Set(SetTokenArgs),
}

#[derive(Debug, Args)]
pub struct AccountArgs {
    /// The account (webhook URLs name it with `?account=`).
    #[arg(long, default_value = DEFAULT_ACCOUNT_ID)]
    pub account: String,
    #[command(flatten)]
    pub database: DatabaseArgs,
}

#[derive(Debug, Args)]
pub struct SetProviderSecretArgs {
    /// mailgun (signing key), sendgrid (Inbound Parse `user:password`), sendgrid-events (the
    /// Event Webhook's verification key), postmark (`user:password`), ses (allowed topic ARNs,
    /// one a line), calendly or calcom (signing keys), twilio (auth token).
    pub provider: String,
    /// The secret, or `-` to read it from stdin (omit with `--clear`).
    #[arg(required_unless_present = "clear")]
    pub secret: Option<String>,
    /// Remove the provider's secret: its webhooks answer 401 from then on.
    #[arg(long, conflicts_with = "secret")]
    pub clear: bool,
    #[command(flatten)]
    pub account: AccountArgs,
}

#[derive(Debug, Args)]
pub struct SetTokenArgs {
    /// The auth token from the Twilio console, or `-` to read it from stdin.
    pub token: String,
    #[command(flatten)]
    pub account: AccountArgs,
}

async fn open(args: &AccountArgs) -> anyhow::Result<Db> {
    args.database.open_existing().await
}

pub async fn secret(command: WebhookSecretCommand) -> anyhow::Result<()> {
    match command {
        WebhookSecretCommand::Show(args) => {
            let db = open(&args).await?;
            let keys = provider_secrets::keys(&db, &args.account)
                .await?
                .with_context(|| format!("no account `{}`", args.account))?;
            println!("{}", keys.webhook_secret);
            Ok(())
        }
    }
}

/// The argument itself, or stdin's text when it is `-`.
fn read_secret(arg: &str) -> anyhow::Result<String> {
    if arg == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the secret from stdin")?;
        Ok(text)
    } else {
        Ok(arg.to_string())
    }
}

/// Checks and stores the secret; the message never quotes it.
async fn set(
    account: &AccountArgs,
    provider: Provider,
    secret: Option<String>,
) -> anyhow::Result<()> {
    let secret = match secret {
        Some(text) => Some(
            provider
                .check_secret(&text)
                .map_err(|e| anyhow::anyhow!("{provider}: {e}"))?,
        ),
        None => None,
    };
    let db = open(account).await?;
    let now = SystemClock.now().timestamp_millis();
    let found =
        provider_secrets::set(&db, &account.account, provider, secret.as_deref(), now).await?;
    anyhow::ensure!(found, "no account `{}`", account.account);
    let done = if secret.is_some() { "set" } else { "removed" };
    eprintln!(
        "nudge: the {provider} secret of account `{}` is {done}",
        account.account
    );
    Ok(())
}

pub async fn provider(command: ProviderSecretCommand) -> anyhow::Result<()> {
    match command {
        ProviderSecretCommand::Set(args) => {
            let provider = Provider::parse(&args.provider).map_err(anyhow::Error::msg)?;
            let secret = match (&args.secret, args.clear) {
                (_, true) => None,
                (Some(arg), false) => Some(read_secret(arg)?),
                (None, false) => anyhow::bail!("give the secret, `-` for stdin, or --clear"),
            };
            set(&args.account, provider, secret).await
        }
    }
}

pub async fn twilio(command: TwilioTokenCommand) -> anyhow::Result<()> {
    match command {
        TwilioTokenCommand::Set(args) => {
            let token = read_secret(&args.token)?;
            set(&args.account, Provider::Twilio, Some(token)).await
        }
    }
}
