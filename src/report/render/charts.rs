//! The report's two charts as SVG, drawn by `plotters` (SVG backend only):
//! request size per call under each mode against the trigger, and sessions
//! by tokens saved.
//!
//! Modes are told apart where their lines coincide (a session no mode
//! compacts has four equal lines) by a dash pattern, a stroke width and a
//! marker shape per mode, markers staggered so that each mode's show; the
//! caption names the lines that coincide. Axes carry titles and formatted
//! ticks; a legend strip sits above the plot so it never covers a line.
//!
//! Output is deterministic: plotters writes integer pixel coordinates, and
//! every label here is formatted from integers or with fixed decimals. The
//! SVG keeps its `viewBox` and takes the width of its container.

use super::Series;
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// Drawing size of a chart, in SVG user units (scaled to the container).
const WIDTH: u32 = 480;
const LINE_HEIGHT: u32 = 360;
const HIST_HEIGHT: u32 = 300;
/// Height of a row of the legend strip above the plot.
const LEGEND_ROW: u32 = 28;
/// Font sizes in plotters units (the SVG's `font-size` is this / 1.24).
const LABEL_FONT: u32 = 18;
const TITLE_FONT: u32 = 19;
/// Tick labels asked of plotters per axis: it picks round steps (1, 2, 5 × 10ⁿ)
/// giving at most this many, so 8 or more leave at least 4.
const Y_TICKS: usize = 8;
const X_TICKS: usize = 10;
/// Markers per line, about: one every `calls / MARKERS` calls.
const MARKERS: usize = 10;
/// Width of a histogram bin, in percentage points.
const BIN_PCT: usize = 10;
const BINS: usize = 100 / BIN_PCT;
const TRIGGER: RGBColor = RGBColor(0xcc, 0x00, 0x00);

/// How a mode is drawn.
#[derive(Clone, Copy)]
struct Look {
    mode: &'static str,
    color: RGBColor,
    width: u32,
    /// Dash length and gap in pixels; `None` for a solid line.
    dash: Option<(u32, u32)>,
    marker: Marker,
}

#[derive(Clone, Copy, PartialEq)]
enum Marker {
    Circle,
    Triangle,
    Square,
    Cross,
}

/// Drawn in this order: the widest line under the narrower ones.
const LOOKS: [Look; 4] = [
    Look {
        mode: "none",
        color: RGBColor(0x99, 0x99, 0x99),
        width: 5,
        dash: None,
        marker: Marker::Circle,
    },
    Look {
        mode: "legacy",
        color: RGBColor(0xd9, 0x5f, 0x02),
        width: 3,
        dash: Some((12, 6)),
        marker: Marker::Triangle,
    },
    Look {
        mode: "lean",
        color: RGBColor(0x1b, 0x9e, 0x77),
        width: 2,
        dash: Some((5, 4)),
        marker: Marker::Square,
    },
    Look {
        mode: "tiered",
        color: RGBColor(0x75, 0x70, 0xb3),
        width: 2,
        dash: Some((2, 3)),
        marker: Marker::Cross,
    },
];

fn look(mode: &str) -> Look {
    LOOKS.iter().copied().find(|l| l.mode == mode).unwrap_or(Look {
        mode: "other",
        color: RGBColor(0, 0, 0),
        width: 1,
        dash: None,
        marker: Marker::Circle,
    })
}

/// A token count as a tick label: `30K`, `1.5M`, else with separators.
pub(super) fn tokens_label(v: u64) -> String {
    if v >= 1_000_000 && v.is_multiple_of(100_000) {
        let tenths = v / 100_000;
        if tenths.is_multiple_of(10) {
            format!("{}M", crate::figures::thousands(tenths / 10))
        } else {
            format!("{}.{}M", tenths / 10, tenths % 10)
        }
    } else if v >= 1_000 && v.is_multiple_of(1_000) {
        format!("{}K", crate::figures::thousands(v / 1_000))
    } else if v >= 1_000 && v.is_multiple_of(100) {
        format!("{}.{}K", v / 1_000, (v % 1_000) / 100)
    } else {
        crate::figures::thousands(v)
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws a marker of `m` centred on pixel `(x, y)`.
fn marker(area: &Area, m: Marker, (x, y): (i32, i32), color: RGBColor) -> Result<(), String> {
    let s = 5;
    let stroke = ShapeStyle::from(color).stroke_width(2);
    let r = match m {
        Marker::Circle => area.draw(&Circle::new((x, y), s, color.filled())),
        Marker::Triangle => {
            area.draw(&Polygon::new(vec![(x, y - s - 1), (x - s, y + s), (x + s, y + s)], color))
        }
        Marker::Square => {
            area.draw(&Rectangle::new([(x - s + 1, y - s + 1), (x + s - 1, y + s - 1)], stroke))
        }
        Marker::Cross => {
            area.draw(&PathElement::new(vec![(x - s, y - s), (x + s, y + s)], stroke)).and_then(
                |_| area.draw(&PathElement::new(vec![(x - s, y + s), (x + s, y - s)], stroke)),
            )
        }
    };
    r.map_err(|e| e.to_string())
}

/// A line sample for the legend: `look`'s stroke and marker.
fn legend_entry(area: &Area, l: &Look, x: i32, y: i32) -> Result<(), String> {
    let style = ShapeStyle::from(l.color).stroke_width(l.width);
    let sample = vec![(x, y), (x + 28, y)];
    match l.dash {
        None => area.draw(&PathElement::new(sample, style)),
        Some((d, g)) => area.draw(&DashedPathElement::new(sample, d, g, style)),
    }
    .map_err(|e| e.to_string())?;
    marker(area, l.marker, (x + 14, y), l.color)?;
    legend_text(area, l.mode.to_string(), (x + 34, y - 9), &BLACK)
}

/// A bar chart's legend entry: a filled swatch of `color` centred on row `y`
/// from `x`, and its label.
fn legend_swatch(
    area: &Area,
    color: RGBColor,
    label: String,
    (x, y): (i32, i32),
) -> Result<(), String> {
    area.draw(&Rectangle::new([(x, y - 7), (x + 22, y + 7)], color.filled()))
        .map_err(|e| e.to_string())?;
    legend_text(area, label, (x + 28, y - 9), &BLACK)
}

/// A legend's text in `color`, its top-left corner at `at`.
fn legend_text(area: &Area, text: String, at: (i32, i32), color: &RGBColor) -> Result<(), String> {
    area.draw(&Text::new(text, at, ("sans-serif", LABEL_FONT).into_font().color(color)))
        .map_err(|e| e.to_string())
}

/// Makes the SVG take its container's width, keeping the aspect ratio, and
/// gives it an accessible name.
fn responsive(svg: String, w: u32, h: u32, label: &str) -> String {
    let head = format!(r#"<svg width="{w}" height="{h}" viewBox="0 0 {w} {h}""#);
    let to = format!(
        r#"<svg width="100%" viewBox="0 0 {w} {h}" preserveAspectRatio="xMidYMid meet" role="img" aria-label="{}""#,
        super::esc(label)
    );
    svg.replacen(&head, &to, 1).trim_end().to_string()
}

/// The modes whose replay stopped compacting, and at which call:
/// `lean at call 57`, `legacy at call 40, lean at call 57`.
pub(super) fn stopped_text(series: &[&Series]) -> Option<String> {
    let stopped: Vec<String> = series
        .iter()
        .filter_map(|s| {
            s.stopped_at
                .map(|c| format!("{} at call {}", s.mode, crate::figures::thousands(c as u64)))
        })
        .collect();
    (!stopped.is_empty()).then(|| stopped.join(", "))
}

/// Request size per call, one line per series (mode), with the trigger.
/// `series` are one session's, all with the same threshold. A mode whose
/// replay stopped compacting (the thrash guard) gets a dotted vertical line
/// in its colour at that call, and a third legend row that says so.
pub fn request_sizes(label: &str, series: &[&Series]) -> Result<String, String> {
    let stopped = stopped_text(series);
    let legend_rows = if stopped.is_some() { 3 } else { 2 };
    let height = LINE_HEIGHT + (legend_rows - 2) * LEGEND_ROW;
    let threshold = series.first().map_or(0, |s| s.threshold);
    let calls = series.iter().map(|s| s.tokens.len()).max().unwrap_or(0) as u64;
    let top = series.iter().flat_map(|s| s.tokens.iter().copied()).chain([threshold]).max();
    let y_max = (top.unwrap_or(0).max(10) as f64 * 1.08) as u64;
    // At least 5 calls wide, so that the axis has ticks to show.
    let x_max = calls.max(5);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        // Legend: the modes in one row, the trigger in a second, where the
        // replay stopped compacting in a third.
        let (legend, plot) = root.split_vertically(legend_rows * LEGEND_ROW);
        let mut chart = framed(&plot)
            .build_cartesian_2d(1u64..x_max, 0u64..y_max)
            .map_err(|e| e.to_string())?;
        meshed(
            &mut chart.configure_mesh(),
            ("API call (nth assistant reply)", "request size (tokens)"),
        )
        .x_labels(X_TICKS)
        .x_label_formatter(&|v| crate::figures::thousands(*v))
        .y_label_formatter(&|v| tokens_label(*v))
        .draw()
        .map_err(|e| e.to_string())?;
        chart
            .draw_series(DashedLineSeries::new(
                [(1, threshold), (x_max, threshold)],
                8,
                5,
                ShapeStyle::from(TRIGGER).stroke_width(1),
            ))
            .map_err(|e| e.to_string())?;
        for s in series {
            if let Some(at) = s.stopped_at {
                let x = (at as u64).clamp(1, x_max);
                chart
                    .draw_series(DashedLineSeries::new(
                        [(x, 0), (x, y_max)],
                        3,
                        3,
                        ShapeStyle::from(look(&s.mode).color).stroke_width(2),
                    ))
                    .map_err(|e| e.to_string())?;
            }
        }
        let every = (calls as usize).div_ceil(MARKERS).max(1);
        for (k, s) in series.iter().enumerate() {
            let l = look(&s.mode);
            let points: Vec<(u64, u64)> =
                s.tokens.iter().enumerate().map(|(i, v)| (i as u64 + 1, *v)).collect();
            let style = ShapeStyle::from(l.color).stroke_width(l.width);
            match l.dash {
                None => chart.draw_series(LineSeries::new(points.iter().copied(), style)),
                Some((d, g)) => {
                    chart.draw_series(DashedLineSeries::new(points.iter().copied(), d, g, style))
                }
            }
            .map_err(|e| e.to_string())?;
            // Staggered: mode k marks calls k·every/4, then every `every` calls.
            let offset = k * every / LOOKS.len();
            for p in points.iter().skip(offset).step_by(every) {
                let at = chart.backend_coord(p);
                marker(&root, l.marker, at, l.color)?;
            }
        }
        let mut x = 10;
        for s in series {
            legend_entry(&legend, &look(&s.mode), x, LEGEND_ROW as i32 / 2 + 2)?;
            x += 50 + 9 * s.mode.len() as i32;
        }
        let (x, y) = (10, LEGEND_ROW as i32 * 3 / 2);
        legend
            .draw(&DashedPathElement::new(
                vec![(x, y), (x + 28, y)],
                8,
                5,
                ShapeStyle::from(TRIGGER).stroke_width(1),
            ))
            .map_err(|e| e.to_string())?;
        let trigger = format!("trigger {}", crate::figures::thousands(threshold));
        legend_text(&legend, trigger, (x + 34, y - 9), &TRIGGER)?;
        if let Some(text) = &stopped {
            let y = LEGEND_ROW as i32 * 5 / 2;
            let color = match series.iter().filter(|s| s.stopped_at.is_some()).collect::<Vec<_>>()[..]
            {
                [one] => look(&one.mode).color,
                _ => RGBColor(0, 0, 0),
            };
            legend
                .draw(&DashedPathElement::new(
                    vec![(x + 14, y - 10), (x + 14, y + 10)],
                    3,
                    3,
                    ShapeStyle::from(color).stroke_width(2),
                ))
                .map_err(|e| e.to_string())?;
            legend_text(
                &legend,
                format!("stopped, ineffective twice: {text}"),
                (x + 34, y - 9),
                &BLACK,
            )?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(responsive(svg, WIDTH, height, label))
}

/// The histogram's count axis: it ends at the first round tick at or above
/// the tallest bar. Returns that end and how many tick labels plotters is
/// asked for (0 to the end in round steps of 1, 2 or 5 × 10ⁿ, at most
/// [`Y_TICKS`] labels), so that its steps are ours.
fn count_axis(tallest: u64) -> (u64, usize) {
    let tallest = tallest.max(1);
    let mut scale = 1u64;
    loop {
        for step in [scale, 2 * scale, 5 * scale] {
            let steps = tallest.div_ceil(step);
            if steps < Y_TICKS as u64 {
                return (steps * step, steps as usize + 1);
            }
        }
        scale = scale.saturating_mul(10);
    }
}

/// Sessions by tokens saved, in `BIN_PCT`-point bins, one bar per mode in each bin.
pub fn savings_histogram(savings: &[(String, Vec<f64>)]) -> Result<String, String> {
    let counts: Vec<(&str, [u64; BINS])> = savings
        .iter()
        .map(|(m, v)| {
            let mut c = [0u64; BINS];
            for s in v {
                c[((s.max(0.0) / BIN_PCT as f64) as usize).min(BINS - 1)] += 1;
            }
            (m.as_str(), c)
        })
        .collect();
    let top = counts.iter().flat_map(|(_, c)| c.iter().copied()).max().unwrap_or(0);
    let (y_max, y_labels) = count_axis(top);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HIST_HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (legend, plot) = root.split_vertically(LEGEND_ROW + 4);
        let mut chart = framed(&plot)
            .build_cartesian_2d(0u32..100u32, 0u64..y_max)
            .map_err(|e| e.to_string())?;
        meshed(
            &mut chart.configure_mesh(),
            ("tokens saved (share of the session)", "compacted sessions"),
        )
        .disable_x_mesh()
        .y_labels(y_labels)
        .x_labels(BINS + 1)
        .x_label_formatter(&|v| format!("{v}%"))
        .y_label_formatter(&|v| crate::figures::thousands(*v))
        .draw()
        .map_err(|e| e.to_string())?;
        let group = counts.len().max(1) as u32;
        // Each bin holds `group` bars of equal width, centred, with a gap either side.
        let bar = (BIN_PCT as u32 - 2) / group;
        let pad = (BIN_PCT as u32 - bar * group) / 2;
        for (k, (m, c)) in counts.iter().enumerate() {
            let l = look(m);
            for (b, v) in c.iter().enumerate() {
                if *v == 0 {
                    continue;
                }
                let x0 = (b * BIN_PCT) as u32 + pad + bar * k as u32;
                chart
                    .draw_series([Rectangle::new([(x0, 0), (x0 + bar, *v)], l.color.filled())])
                    .map_err(|e| e.to_string())?;
            }
        }
        let mut x = 10;
        for (m, _) in &counts {
            let l = look(m);
            legend_swatch(&legend, l.color, m.to_string(), (x, LEGEND_ROW as i32 / 2 + 2))?;
            x += 44 + 9 * m.len() as i32;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(responsive(svg, WIDTH, HIST_HEIGHT, "compacted sessions by tokens saved"))
}

/// One group of the retention chart: its label, and per category `[kept, of]`.
pub type BarGroup = (String, Vec<(String, [usize; 2])>);

/// Colours of the retention chart's bar groups, in order (agent, lean, agent, lean).
const RETENTION_COLORS: [RGBColor; 4] = [
    RGBColor(0xd9, 0x5f, 0x02),
    RGBColor(0x1b, 0x9e, 0x77),
    RGBColor(0xfd, 0xae, 0x6b),
    RGBColor(0x74, 0xc4, 0x76),
];
/// Width of one category's slot on the retention chart's x axis, in axis units.
const SLOT: u32 = 100;

/// Retention by category: for each category, one bar per group (`label`,
/// per category `[kept, of]`) at `100 × kept / of` percent; no bar where a
/// group has nothing to keep. Groups are told apart by colour and by the
/// legend above the plot; category names label the slots below it.
pub fn retention_bars(groups: &[BarGroup]) -> Result<String, String> {
    let cats: Vec<&str> =
        groups.first().map(|g| g.1.iter().map(|(c, _)| c.as_str()).collect()).unwrap_or_default();
    let slots = cats.len().max(1) as u32;
    let legend_rows = groups.len().div_ceil(2) as u32;
    let height = HIST_HEIGHT + legend_rows * LEGEND_ROW;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (legend, plot) = root.split_vertically(legend_rows * LEGEND_ROW + 4);
        let mut chart = framed(&plot)
            .build_cartesian_2d(0u32..slots * SLOT, 0u32..100u32)
            .map_err(|e| e.to_string())?;
        let names = cats.clone();
        meshed(&mut chart.configure_mesh(), ("", "kept (% of the anchors before)"))
            .disable_x_mesh()
            .x_labels(cats.len() * 2 + 1)
            .x_label_formatter(&|v| {
                // A label at each slot's centre only.
                let slot = (*v / SLOT) as usize;
                if *v % SLOT == SLOT / 2 {
                    names.get(slot).map_or(String::new(), |c| c.replace('_', " "))
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| format!("{v}%"))
            .draw()
            .map_err(|e| e.to_string())?;
        let group = groups.len().max(1) as u32;
        let bar = (SLOT - 20) / group;
        for (k, (_, values)) in groups.iter().enumerate() {
            let color = RETENTION_COLORS[k % RETENTION_COLORS.len()];
            for (slot, (_, [kept, of])) in values.iter().enumerate() {
                if *of == 0 {
                    continue;
                }
                // A share that rounds to 0 still shows, as a sliver: 0 of N is
                // not "nothing to keep".
                let pct = (((*kept as u64 * 100 + *of as u64 / 2) / *of as u64) as u32).max(1);
                let x0 = slot as u32 * SLOT + 10 + bar * k as u32;
                chart
                    .draw_series([Rectangle::new([(x0, 0), (x0 + bar - 2, pct)], color.filled())])
                    .map_err(|e| e.to_string())?;
            }
        }
        for (k, (label, _)) in groups.iter().enumerate() {
            let color = RETENTION_COLORS[k % RETENTION_COLORS.len()];
            let x = 10 + (k as i32 % 2) * (WIDTH as i32 / 2);
            let y = LEGEND_ROW as i32 / 2 + 2 + (k as i32 / 2) * LEGEND_ROW as i32;
            legend_swatch(&legend, color, label.clone(), (x, y))?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(responsive(svg, WIDTH, height, "anchors kept by category, the agents' compactions and lean"))
}

/// A chart's frame on `area`: the margins and axis label areas every chart
/// of the report shares (room for tick labels like `200,000` and the axis titles).
fn framed<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    builder
        .margin_right(18)
        .margin_left(6)
        .margin_top(6)
        .x_label_area_size(52)
        .y_label_area_size(70);
    builder
}

/// The mesh every chart of the report shares: no light lines, grey bold
/// lines, [`Y_TICKS`] on the y axis, the label and title fonts, and the axis
/// titles `(x, y)`. The caller adds the x ticks and the tick formats.
fn meshed<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
    (x_desc, y_desc): (&str, &str),
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged,
    Y: Ranged,
    DB: DrawingBackend,
{
    mesh.light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .y_labels(Y_TICKS)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(("sans-serif", LABEL_FONT))
        .axis_desc_style(("sans-serif", TITLE_FONT))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `<text>` elements of an SVG: (opening tag, content).
    fn texts(svg: &str) -> Vec<(&str, &str)> {
        svg.split("<text ")
            .skip(1)
            .filter_map(|t| {
                let (tag, rest) = t.split_once('>')?;
                Some((tag, rest.split("</text>").next()?.trim()))
            })
            .collect()
    }

    /// Tick labels of the y axis (right-aligned) and of the x axis (centred, below).
    fn ticks(svg: &str) -> (Vec<&str>, Vec<&str>) {
        let t = texts(svg);
        let t = t.iter().filter(|(tag, _)| !tag.contains("rotate("));
        let y = t.clone().filter(|(tag, _)| tag.contains(r#"text-anchor="end""#)).map(|x| x.1);
        let x = t
            .filter(|(tag, _)| tag.contains(r#"text-anchor="middle""#) && tag.contains("0.76em"))
            .map(|x| x.1);
        (y.collect(), x.collect())
    }

    /// Whether a rotated text (the y axis title) reads `title`.
    fn has_y_title(svg: &str, title: &str) -> bool {
        texts(svg).iter().any(|(tag, s)| tag.contains("rotate(270") && *s == title)
    }

    /// Each polyline stroked in `color`: (stroke width, length in pixels).
    fn strokes(svg: &str, color: RGBColor) -> Vec<(u32, f64)> {
        let hex = format!(r##"stroke="#{:02X}{:02X}{:02X}""##, color.0, color.1, color.2);
        svg.split("<polyline ")
            .skip(1)
            .filter(|p| p.split("/>").next().is_some_and(|tag| tag.contains(&hex)))
            .filter_map(|p| {
                let width = p.split(r#"stroke-width=""#).nth(1)?.split('"').next()?.parse().ok()?;
                let pts: Vec<(f64, f64)> = p
                    .split(r#"points=""#)
                    .nth(1)?
                    .split('"')
                    .next()?
                    .split_whitespace()
                    .filter_map(|xy| {
                        let (x, y) = xy.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect();
                let len = pts.windows(2).map(|w| (w[1].0 - w[0].0).hypot(w[1].1 - w[0].1)).sum();
                Some((width, len))
            })
            .collect()
    }

    fn series(mode: &str, tokens: &[u64]) -> Series {
        Series {
            source: "s.jsonl:1".into(),
            mode: mode.into(),
            threshold: 27_200,
            tokens: tokens.to_vec(),
            provider_calls: 0,
            stopped_at: None,
            last_total: false,
        }
    }

    /// Four modes over 40 calls, all equal: the case where one line hid the others.
    fn equal_lines() -> Vec<Series> {
        let tokens: Vec<u64> = (1..=40).map(|i| i * 650).collect();
        ["none", "legacy", "lean", "tiered"].iter().map(|m| series(m, &tokens)).collect()
    }

    #[test]
    fn the_request_chart_has_axis_titles_ticks_and_a_legend() {
        let all = equal_lines();
        let of: Vec<&Series> = all.iter().collect();
        let svg = request_sizes("a<b>", &of).unwrap();
        assert!(svg.starts_with("<svg width=\"100%\" viewBox=\"0 0 480 360\""), "{svg:.200}");
        assert!(svg.contains(r#"aria-label="a&lt;b&gt;""#) && svg.ends_with("</svg>"));
        assert!(has_y_title(&svg, "request size (tokens)"));
        assert!(texts(&svg).iter().any(|t| t.1 == "API call (nth assistant reply)"));
        let (y, x) = ticks(&svg);
        assert!(y.len() >= 4 && x.len() >= 4, "y {y:?}, x {x:?}");
        // Round values, formatted: the top of 26,000 × 1.08 gives 0, 5K, ... 25K.
        assert_eq!(y, ["0", "5K", "10K", "15K", "20K", "25K"]);
        assert_eq!(x, ["5", "10", "15", "20", "25", "30", "35", "40"]);
        let labels: Vec<&str> = texts(&svg).iter().map(|t| t.1).collect();
        for mode in ["none", "legacy", "lean", "tiered", "trigger 27,200"] {
            assert_eq!(labels.iter().filter(|l| **l == mode).count(), 1, "{mode} in the legend");
        }
    }

    #[test]
    fn modes_are_drawn_with_distinct_strokes_even_when_equal() {
        let all = equal_lines();
        let of: Vec<&Series> = all.iter().collect();
        let svg = request_sizes("s", &of).unwrap();
        // Per mode: its stroke width and its median dash length (the longest
        // stroke for a solid line). Crosses (tiered's markers) are a minority.
        let mut seen = Vec::new();
        for l in LOOKS {
            let mut s = strokes(&svg, l.color);
            assert!(!s.is_empty(), "{} drawn", l.mode);
            s.sort_by(|a, b| a.1.total_cmp(&b.1));
            let dash = match l.dash {
                None => s.last().map_or(0.0, |x| x.1),
                Some(_) => s[s.len() / 2].1,
            };
            let width = s[s.len() / 2].0;
            assert_eq!(width, l.width, "{}", l.mode);
            if let Some((d, _)) = l.dash {
                assert!((dash - d as f64).abs() <= 1.5, "{}: dashes of {dash}, not {d}", l.mode);
            } else {
                assert!(dash > 300.0, "{}: one solid line", l.mode);
            }
            seen.push((width, dash.round() as i64));
        }
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), LOOKS.len(), "{seen:?}");
        // And each mode's markers: circles, triangles (polygons), squares, crosses.
        assert!(svg.contains("<circle") && svg.contains("<polygon") && svg.contains("<rect"));
    }

    #[test]
    fn the_histogram_has_a_y_scale() {
        let savings = vec![
            ("legacy".to_string(), vec![55.0, 58.0, 61.0]),
            ("lean".to_string(), vec![5.0, 95.0, 100.0, 99.0, -3.0]),
            ("tiered".to_string(), vec![]),
        ];
        let svg = savings_histogram(&savings).unwrap();
        assert!(svg.starts_with("<svg width=\"100%\" viewBox=\"0 0 480 300\""));
        assert!(has_y_title(&svg, "compacted sessions"));
        assert!(texts(&svg).iter().any(|t| t.1 == "tokens saved (share of the session)"));
        let (y, x) = ticks(&svg);
        // The largest bin holds 3: the scale ends there (issue 41; it went on to 4).
        assert_eq!(y, ["0", "1", "2", "3"]);
        assert_eq!(x.len(), 11, "{x:?}");
        assert_eq!((x[0], x[10]), ("0%", "100%"));
        // Bars: legacy 50-60 (2) and 60-70 (1); lean 0-10 (2, with -3 clamped) and 90-100 (3).
        let bars = |c: RGBColor| {
            let fill = format!(r##"fill="#{:02X}{:02X}{:02X}""##, c.0, c.1, c.2);
            svg.split("<rect ").skip(1).filter(|r| r.contains(&fill)).count()
        };
        // One legend swatch each, plus the bars.
        assert_eq!(bars(look("legacy").color), 1 + 2);
        assert_eq!(bars(look("lean").color), 1 + 2);
        assert_eq!(bars(look("tiered").color), 1);
    }

    /// Issue 41, point 6: the count axis ends at the first round tick at or
    /// above the tallest bar, in steps of 1, 2 or 5 × 10ⁿ, at most `Y_TICKS` labels.
    #[test]
    fn histogram_ticks_end_near_the_tallest_bar() {
        for (tallest, end, labels) in [
            (0, 1, 2),
            (1, 1, 2),
            (3, 3, 4),
            (7, 7, 8),
            (8, 8, 5),
            (12, 12, 7),
            (23, 25, 6),
            (130, 140, 8),
        ] {
            assert_eq!(count_axis(tallest), (end, labels), "{tallest}");
        }
        let savings = vec![("lean".to_string(), vec![55.0; 23])];
        let svg = savings_histogram(&savings).unwrap();
        let (y, _) = ticks(&svg);
        assert_eq!(y, ["0", "5", "10", "15", "20", "25"]);
    }

    /// Issue 41, point 6: a replay that stopped compacting says so on its
    /// chart: a dotted line in its mode's colour at that call, and a legend row.
    #[test]
    fn a_stopped_replay_is_marked_on_its_chart() {
        let tokens: Vec<u64> = (1..=40).map(|i| i * 900).collect();
        let mut lean = series("lean", &tokens);
        lean.stopped_at = Some(30);
        let none = series("none", &tokens);
        let svg = request_sizes("s", &[&none, &lean]).unwrap();
        assert!(svg.starts_with("<svg width=\"100%\" viewBox=\"0 0 480 388\""), "{svg:.120}");
        let labels: Vec<&str> = texts(&svg).iter().map(|t| t.1).collect();
        assert!(labels.contains(&"stopped, ineffective twice: lean at call 30"), "{labels:?}");
        // Lean's vertical marker: width-2 dashes in lean's colour on one x.
        let hex = {
            let c = look("lean").color;
            format!(r##"stroke="#{:02X}{:02X}{:02X}""##, c.0, c.1, c.2)
        };
        let vertical = svg
            .split("<polyline ")
            .filter(|p| p.contains(&hex) && p.contains(r#"stroke-width="2""#))
            .filter_map(|p| p.split(r#"points=""#).nth(1)?.split('"').next())
            .filter(|pts| {
                let xs: Vec<&str> =
                    pts.split_whitespace().filter_map(|xy| xy.split(',').next()).collect();
                xs.len() == 2 && xs[0] == xs[1]
            })
            .count();
        assert!(vertical > 10, "a dotted vertical line of many dashes: {vertical}");
        // Without a stop: no third legend row.
        let svg = request_sizes("s", &[&none, &series("lean", &tokens)]).unwrap();
        assert!(svg.starts_with("<svg width=\"100%\" viewBox=\"0 0 480 360\""));
        assert!(!svg.contains("stopped"));
    }

    #[test]
    fn token_labels_are_short_and_exact() {
        for (tokens, label) in [
            (0, "0"),
            (250, "250"),
            (2_500, "2.5K"),
            (1_250, "1,250"),
            (40_000, "40K"),
            (1_500_000, "1.5M"),
            (2_000_000, "2M"),
            (1_000_000_000, "1,000M"),
        ] {
            assert_eq!(tokens_label(tokens), label, "{tokens}");
        }
    }
}
