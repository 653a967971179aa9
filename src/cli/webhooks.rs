//! `nudge webhook-secret show` and `nudge twilio-token set`: what a provider's webhook is
//! signed with (SPEC §7). The secret is printed alone on stdout so scripts can capture it.

use super::DatabaseArgs;
use crate::store::accounts::DEFAULT_ACCOUNT_ID;
use crate::store::{signals, Db};
use anyhow::Context;
use clap::{Args, Subcommand};
use std::io::Read;

#[derive(Debug, Subcommand)]
pub enum WebhookSecretCommand {
    /// Print the account's webhook secret (signs `X-Nudge-Signature`).
    Show(AccountArgs),
}

#[derive(Debug, Subcommand)]
pub enum TwilioTokenCommand {
    /// Set the account's Twilio auth token (checks `X-Twilio-Signature`). `-` reads it from
    /// stdin, so it stays out of the shell history.
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
            let (secret, _) = signals::webhook_keys(&db, &args.account)
                .await?
                .with_context(|| format!("no account `{}`", args.account))?;
            println!("{secret}");
            Ok(())
        }
    }
}

pub async fn twilio(command: TwilioTokenCommand) -> anyhow::Result<()> {
    match command {
        TwilioTokenCommand::Set(args) => {
            let token = if args.token == "-" {
                let mut text = String::new();
                std::io::stdin().read_to_string(&mut text)?;
                text.trim().to_string()
            } else {
                args.token.trim().to_string()
            };
            anyhow::ensure!(!token.is_empty(), "the Twilio auth token is empty");
            let db = open(&args.account).await?;
            let found =
                signals::set_twilio_auth_token(&db, &args.account.account, Some(&token)).await?;
            anyhow::ensure!(found, "no account `{}`", args.account.account);
            eprintln!(
                "nudge: the Twilio auth token of account `{}` is set",
                args.account.account
            );
            Ok(())
        }
    }
}
