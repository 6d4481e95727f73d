//! The `retry-sim --svg` pictures: two panels side by side, one line per series, with
//! labelled axes and a legend. Plain SVG text, no dependencies. The contention experiment draws
//! work and completion time against clients; the load experiment, load and success against the
//! failure rate; the metastable experiment, goodput and load over time through one trigger.

use std::fmt::Write;

use crate::names::Named;
use crate::{contention, load, metastable};

/// The size of one panel, and the margins around its plot area.
const PANEL: (f64, f64) = (520.0, 400.0);
const MARGIN: (f64, f64, f64, f64) = (70.0, 20.0, 40.0, 55.0); // left, right, top, bottom
const LEGEND_HEIGHT: f64 = 40.0;
/// Colours for the strategies, in the order they are drawn (colour-blind-safe Okabe-Ito).
const COLOURS: [&str; 5] = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#CC79A7"];

/// A picture of two panels sharing their horizontal axis.
struct Figure {
    title: String,
    x_label: &'static str,
    panels: [Panel; 2],
    /// The series' names, in the order they are drawn and listed.
    series: Vec<String>,
}

/// One panel: what its vertical axis shows, and each series' points (in the order of `series`).
struct Panel {
    label: &'static str,
    scale: Scale,
    lines: Vec<Vec<(f64, f64)>>,
}

/// The contention experiment's picture: work (linear) and completion time (logarithmic, as they
/// differ by orders of magnitude between strategies) against clients.
pub(crate) fn contention(points: &[contention::Point], title: &str) -> String {
    let by = Series::of(
        points,
        |point| point.strategy,
        |point| f64::from(point.clients),
    );
    render(&Figure {
        title: title.to_string(),
        x_label: "clients",
        panels: [
            Panel {
                label: "Work (writes, mean)",
                scale: Scale::Linear,
                lines: by.lines(|point| point.work.mean),
            },
            Panel {
                label: "Completion time (ms, mean, log scale)",
                scale: Scale::Log,
                lines: by.lines(|point| point.completion_ms.mean),
            },
        ],
        series: by.keys.iter().map(ToString::to_string).collect(),
    })
}

/// The load experiment's picture: load and success against the failure rate.
pub(crate) fn load(points: &[load::Point], title: &str) -> String {
    let by = Series::of(points, |point| point.policy, |point| point.failure_rate);
    render(&Figure {
        title: title.to_string(),
        x_label: "failure rate",
        panels: [
            Panel {
                label: "Load (server calls per first try, mean)",
                scale: Scale::Linear,
                lines: by.lines(|point| point.load.0),
            },
            Panel {
                label: "Success (successes per first try, mean)",
                scale: Scale::Linear,
                lines: by.lines(|point| point.success.0),
            },
        ],
        series: by
            .keys
            .iter()
            .map(|&policy| Named(policy).to_string())
            .collect(),
    })
}

/// The metastable experiment's picture: goodput and offered load over time, a line per policy,
/// through one trigger, from 20 s before it.
pub(crate) fn metastable(outcomes: &[metastable::Outcome], title: &str) -> String {
    let from = (metastable::BEFORE - 20.0) as usize;
    let over_time = |values: &[f64]| -> Vec<(f64, f64)> {
        let seconds = values.iter().enumerate().skip(from);
        seconds
            .map(|(second, &value)| (second as f64, value))
            .collect()
    };
    render(&Figure {
        title: title.to_string(),
        x_label: "seconds",
        panels: [
            Panel {
                label: "Goodput (successes a second per request a second)",
                scale: Scale::Linear,
                lines: outcomes.iter().map(|run| over_time(&run.goodput)).collect(),
            },
            Panel {
                label: "Load (attempts a second per capacity)",
                scale: Scale::Linear,
                lines: outcomes.iter().map(|run| over_time(&run.offered)).collect(),
            },
        ],
        series: outcomes
            .iter()
            .map(|run| Named(run.policy).to_string())
            .collect(),
    })
}

/// Points grouped into series by a key, in the order the keys first appear.
struct Series<'p, P, K> {
    points: &'p [P],
    keys: Vec<K>,
    key: fn(&P) -> K,
    x: fn(&P) -> f64,
}

impl<'p, P, K: PartialEq> Series<'p, P, K> {
    fn of(points: &'p [P], key: fn(&P) -> K, x: fn(&P) -> f64) -> Self {
        let mut keys: Vec<K> = Vec::new();
        for point in points {
            let point_key = key(point);
            if !keys.contains(&point_key) {
                keys.push(point_key);
            }
        }
        Series {
            points,
            keys,
            key,
            x,
        }
    }

    /// Each series' (x, `value`) points.
    fn lines(&self, value: fn(&P) -> f64) -> Vec<Vec<(f64, f64)>> {
        self.keys
            .iter()
            .map(|series| {
                let mine = self
                    .points
                    .iter()
                    .filter(|point| (self.key)(point) == *series);
                mine.map(|point| ((self.x)(point), value(point))).collect()
            })
            .collect()
    }
}

/// The SVG document of `figure`.
fn render(figure: &Figure) -> String {
    let width = 2.0 * PANEL.0;
    let height = PANEL.1 + LEGEND_HEIGHT + 30.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
        width / 2.0,
        escape(&figure.title)
    );
    for (index, panel) in figure.panels.iter().enumerate() {
        panel.draw(&mut svg, index as f64 * PANEL.0, 30.0, figure.x_label);
    }
    legend(&mut svg, PANEL.1 + 40.0, &figure.series);
    svg.push_str("</svg>\n");
    svg
}

/// How values map onto a vertical axis.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    Linear,
    Log,
}

/// An axis fitted to some values: its range and its round ticks.
#[derive(Clone, Debug, PartialEq)]
struct Axis {
    scale: Scale,
    low: f64,
    high: f64,
    ticks: Vec<f64>,
}

impl Axis {
    fn fit(scale: Scale, values: &[f64]) -> Axis {
        let max = values.iter().copied().fold(0.0, f64::max);
        match scale {
            Scale::Linear => {
                let step = nice_ceiling(max / 5.0);
                let high = (max / step).ceil().max(1.0) * step;
                let ticks = (0..)
                    .map(|i| f64::from(i) * step)
                    .take_while(|&t| t <= high * 1.0001)
                    .collect();
                Axis {
                    scale,
                    low: 0.0,
                    high,
                    ticks,
                }
            }
            Scale::Log => {
                let positive = values.iter().copied().filter(|&v| v > 0.0);
                let min = positive.fold(max, f64::min).max(1e-9);
                let low = 10f64.powf(min.log10().floor());
                let high = 10f64.powf(max.max(low * 10.0).log10().ceil());
                let decades = (high / low).log10().round() as i32;
                let multiples: &[f64] = if decades <= 3 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                let ticks = (0..=decades)
                    .flat_map(|d| multiples.iter().map(move |m| m * low * 10f64.powi(d)))
                    .filter(|&t| t <= high * 1.0001)
                    .collect();
                Axis {
                    scale,
                    low,
                    high,
                    ticks,
                }
            }
        }
    }

    /// Where `value` falls on the axis, from 0 (its start) to 1 (its end).
    fn fraction(&self, value: f64) -> f64 {
        match self.scale {
            Scale::Linear => (value - self.low) / (self.high - self.low),
            Scale::Log => {
                let span = self.high.log10() - self.low.log10();
                (value.max(self.low).log10() - self.low.log10()) / span
            }
        }
    }
}

impl Panel {
    /// Axes, ticks, grid and a line per series, with the panel's top left at (`left`, `top`).
    fn draw(&self, svg: &mut String, left: f64, top: f64, x_label: &str) {
        let (x0, x1) = (left + MARGIN.0, left + PANEL.0 - MARGIN.1);
        let (y0, y1) = (top + PANEL.1 - MARGIN.3, top + MARGIN.2);
        let all = self.lines.iter().flatten();
        let xs: Vec<f64> = all.clone().map(|&(x, _)| x).collect();
        let min_x = xs.iter().copied().fold(f64::MAX, f64::min);
        let x_axis = Axis {
            low: min_x,
            ..Axis::fit(Scale::Linear, &xs)
        };
        let values: Vec<f64> = all.map(|&(_, y)| y).collect();
        let y_axis = Axis::fit(self.scale, &values);
        let to_x = |c: f64| x0 + x_axis.fraction(c).clamp(0.0, 1.0) * (x1 - x0);
        let to_y = |v: f64| y0 - y_axis.fraction(v) * (y0 - y1);
        let middle = (x0 + x1) / 2.0;
        let _ = writeln!(
            svg,
            "<text x=\"{middle}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}</text>",
            y1 - 12.0,
            self.label
        );
        for &tick in &y_axis.ticks {
            let y = to_y(tick);
            let _ = writeln!(
                svg,
                "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#e5e5e5\"/>"
            );
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                x0 - 6.0,
                y + 4.0,
                format_tick(tick)
            );
        }
        for &tick in x_axis.ticks.iter().filter(|&&t| t >= min_x) {
            let x = to_x(tick);
            let _ = writeln!(
                svg,
                "<line x1=\"{x}\" x2=\"{x}\" y1=\"{y0}\" y2=\"{}\" stroke=\"#333\"/>",
                y0 + 5.0
            );
            let _ = writeln!(
                svg,
                "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                y0 + 18.0,
                format_tick(tick)
            );
        }
        let _ = writeln!(
            svg,
            "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{y0}\" y2=\"{y0}\" stroke=\"#333\"/>"
        );
        let _ = writeln!(
            svg,
            "<line x1=\"{x0}\" x2=\"{x0}\" y1=\"{y0}\" y2=\"{y1}\" stroke=\"#333\"/>"
        );
        let _ = writeln!(
            svg,
            "<text x=\"{middle}\" y=\"{}\" text-anchor=\"middle\">{x_label}</text>",
            y0 + 38.0
        );
        for (index, points) in self.lines.iter().enumerate() {
            let line: Vec<String> = points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", to_x(x), to_y(y)))
                .collect();
            let colour = COLOURS[index % COLOURS.len()];
            let _ = writeln!(
                svg,
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
                line.join(" ")
            );
        }
    }
}

fn legend(svg: &mut String, top: f64, series: &[String]) {
    let step = 2.0 * PANEL.0 / (series.len() as f64 + 1.0);
    for (index, name) in series.iter().enumerate() {
        let x = step * (index as f64 + 0.5);
        let colour = COLOURS[index % COLOURS.len()];
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" x2=\"{}\" y1=\"{top}\" y2=\"{top}\" stroke=\"{colour}\" stroke-width=\"3\"/>",
            x + 24.0
        );
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            x + 30.0,
            top + 4.0,
            escape(name)
        );
    }
}

/// The smallest of 1, 2, 5 times a power of ten that is at least `value`.
fn nice_ceiling(value: f64) -> f64 {
    if value <= 0.0 {
        return 1.0;
    }
    let power = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&c| c >= value)
        .unwrap_or(10.0 * power)
}

fn format_tick(value: f64) -> String {
    match value {
        v if v >= 1_000_000.0 => format!("{}M", v / 1_000_000.0),
        v if v >= 10_000.0 => format!("{}k", v / 1000.0),
        // Multiples of a fractional step carry float noise (0.6000000000000001).
        v => {
            let text = format!("{v:.3}");
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contention::{Point, Spread, Strategy};
    use retry_policy::backoff::Jitter;

    fn point(strategy: Strategy, clients: u32, work: f64) -> Point {
        let spread = |value| Spread {
            mean: value,
            p5: value,
            p50: value,
            p95: value,
        };
        Point {
            strategy,
            clients,
            work: spread(work),
            completion_ms: spread(work * 10.0),
        }
    }

    #[test]
    fn draws_a_line_per_strategy_in_each_panel_with_a_legend() {
        let points = [
            point(Strategy::NoBackoff, 10, 50.0),
            point(Strategy::NoBackoff, 20, 200.0),
            point(Strategy::Backoff(Jitter::Full), 10, 20.0),
            point(Strategy::Backoff(Jitter::Full), 20, 45.0),
        ];
        let svg = contention(&points, "a & b");
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert!(svg.contains(">no backoff</text>") && svg.contains(">full</text>"));
        assert!(svg.contains(">clients</text>") && svg.contains("a &amp; b"));
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_ceiling(1856.0), 2000.0);
        assert_eq!(nice_ceiling(0.3), 0.5);
        let work = Axis::fit(Scale::Linear, &[20.0, 7_990.0]);
        assert_eq!(work.ticks, [0.0, 2000.0, 4000.0, 6000.0, 8000.0]);
        let time = Axis::fit(Scale::Log, &[40.0, 101_000.0]);
        assert_eq!((time.low, time.high), (10.0, 1_000_000.0));
        assert_eq!(
            (time.fraction(10.0), time.fraction(1_000_000.0)),
            (0.0, 1.0)
        );
        assert_eq!(format_tick(20_000.0), "20k");
        assert_eq!(format_tick(3.0 * 0.2), "0.6");
        assert_eq!(format_tick(0.0), "0");
    }
}
