//! `--prices [FILE]` (replay, report): resolved once into a [`PriceBook`],
//! and each session priced by it.

use crate::cli::args::BudgetArgs;
use crate::cli::values::{ModelArg, PricesArg};
use anyhow::Context;
use compactor::catalog::prices::{PriceBook, PriceTable, Prices};
use compactor::model::Session;

/// The prices to use: with `--prices[=FILE]`, one model's for every session
/// under `--model NAME`, else each session's own model's; none without it.
pub fn price_book(
    prices: Option<&PricesArg>,
    budget: &BudgetArgs,
) -> anyhow::Result<Option<PriceBook>> {
    let Some(arg) = prices else { return Ok(None) };
    let mut table = PriceTable::default();
    if let PricesArg::File(path) = arg {
        let shown = path.display();
        let text =
            std::fs::read_to_string(path).with_context(|| format!("{shown}: cannot read"))?;
        table
            .extend_from_json(&text)
            .map_err(|e| anyhow::anyhow!("{shown}: invalid prices file: {e}"))?;
    }
    match budget.model.as_ref().and_then(ModelArg::named) {
        Some(model) => table.lookup(model).map(|p| Some(PriceBook::Fixed(p))).with_context(|| {
            format!("no prices for model `{model}`\nhint: add it with --prices FILE")
        }),
        None => Ok(Some(PriceBook::PerModel(table))),
    }
}

/// The prices of `session` (read before a clean request drops the envelopes
/// that name its model), or the model it names that has none (`None`: the
/// log names no model).
pub fn session_prices(book: &PriceBook, session: &Session) -> Result<Prices, Option<String>> {
    let model = match book {
        PriceBook::Fixed(_) => None,
        PriceBook::PerModel(_) => compactor::discover::facts::model(session),
    };
    book.for_model(model.as_deref()).ok_or(model)
}
