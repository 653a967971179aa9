//! Flows and their immutable versions. A flow is named per account; creating one with a name
//! that exists appends a version. Version rows are written once and never updated.

use super::schema::{flow_versions, flows};
use super::{new_id, Db, StoreError};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = flows)]
pub struct FlowRow {
    pub id: String,
    pub account_id: String,
    pub name: String,
    pub latest_version: i32,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = flow_versions)]
pub struct FlowVersionRow {
    pub flow_id: String,
    pub version: i32,
    /// The JSON document exactly as it was created.
    pub definition: String,
    pub created_at: i64,
}

/// A flow at one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFlow {
    pub flow: FlowRow,
    pub version: FlowVersionRow,
}

/// Stores `definition` as the next version of the flow `name` (version 1 for a new name).
pub async fn create_version(
    db: &Db,
    account_id: &str,
    name: &str,
    definition: &str,
    now_ms: i64,
) -> Result<StoredFlow, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => c
        .transaction(async |c| {
            // Bumping the counter first takes the row lock on PostgreSQL, so two concurrent
            // creates of one name get consecutive versions instead of a conflict.
            let bumped = diesel::update(
                flows::table
                    .filter(flows::account_id.eq(account_id))
                    .filter(flows::name.eq(name)),
            )
            .set(flows::latest_version.eq(flows::latest_version + 1))
            .execute(c)
            .await?;
            if bumped == 0 {
                diesel::insert_into(flows::table)
                    .values(&FlowRow {
                        id: new_id("fl"),
                        account_id: account_id.to_string(),
                        name: name.to_string(),
                        latest_version: 1,
                        created_at: now_ms,
                    })
                    .execute(c)
                    .await?;
            }
            let flow = flows::table
                .filter(flows::account_id.eq(account_id))
                .filter(flows::name.eq(name))
                .select(FlowRow::as_select())
                .first(c)
                .await?;
            let version = FlowVersionRow {
                flow_id: flow.id.clone(),
                version: flow.latest_version,
                definition: definition.to_string(),
                created_at: now_ms,
            };
            diesel::insert_into(flow_versions::table)
                .values(&version)
                .execute(c)
                .await?;
            Ok::<_, diesel::result::Error>(StoredFlow { flow, version })
        })
        .await)?)
}

/// One version of a flow found by id or name; `version` 0 means the latest.
pub async fn get(
    db: &Db,
    account_id: &str,
    id_or_name: &str,
    version: i32,
) -> Result<Option<StoredFlow>, StoreError> {
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => {
        let flow = flows::table
            .filter(flows::account_id.eq(account_id))
            .filter(flows::id.eq(id_or_name).or(flows::name.eq(id_or_name)))
            .select(FlowRow::as_select())
            .first(c)
            .await
            .optional()?;
        match flow {
            None => Ok(None),
            Some(flow) => {
                let wanted = if version == 0 { flow.latest_version } else { version };
                let found = flow_versions::table
                    .find((&flow.id, wanted))
                    .select(FlowVersionRow::as_select())
                    .first(c)
                    .await
                    .optional()?;
                Ok::<_, diesel::result::Error>(
                    found.map(|version| StoredFlow { flow, version }),
                )
            }
        }
    })?)
}

/// The stored `versions` of flow `flow_id` (those that exist), newest first: one statement
/// whatever their number.
pub async fn versions(
    db: &Db,
    flow_id: &str,
    versions: &[i32],
) -> Result<Vec<FlowVersionRow>, StoreError> {
    if versions.is_empty() {
        return Ok(Vec::new());
    }
    let conn = db.conn().await?;
    Ok(with_conn!(conn, c => flow_versions::table
        .filter(flow_versions::flow_id.eq(flow_id))
        .filter(flow_versions::version.eq_any(versions))
        .order(flow_versions::version.desc())
        .select(FlowVersionRow::as_select())
        .load(c)
        .await)?)
}

/// The account's flows ordered by name, each at its latest version, starting after
/// `after_name`; at most `limit`.
pub async fn list(
    db: &Db,
    account_id: &str,
    after_name: Option<&str>,
    limit: i64,
) -> Result<Vec<StoredFlow>, StoreError> {
    let conn = db.conn().await?;
    let rows: Vec<(FlowRow, FlowVersionRow)> = with_conn!(conn, c => {
        let mut query = flows::table
            .inner_join(
                flow_versions::table.on(flow_versions::flow_id
                    .eq(flows::id)
                    .and(flow_versions::version.eq(flows::latest_version))),
            )
            .filter(flows::account_id.eq(account_id))
            .order(flows::name.asc())
            .limit(limit)
            .select((FlowRow::as_select(), FlowVersionRow::as_select()))
            .into_boxed();
        if let Some(after) = after_name {
            query = query.filter(flows::name.gt(after));
        }
        query.load(c).await
    })?;
    Ok(rows
        .into_iter()
        .map(|(flow, version)| StoredFlow { flow, version })
        .collect())
}

impl super::Tx {
    /// `(flow id, version, definition)` of every stored version of these flows.
    pub async fn flow_definitions(
        &mut self,
        flow_ids: &[&str],
    ) -> Result<Vec<(String, i32, String)>, StoreError> {
        use super::schema::flow_versions;
        Ok(on_conn!(&mut self.conn, c => flow_versions::table
            .filter(flow_versions::flow_id.eq_any(flow_ids))
            .select((
                flow_versions::flow_id,
                flow_versions::version,
                flow_versions::definition,
            ))
            .load(c)
            .await)?)
    }
}
