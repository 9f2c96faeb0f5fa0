//! Everything a user can get wrong about a monitor fails here, in one line naming the flag,
//! before the first sample: where it exports, the address it listens on, the probe's duty.

use crate::cli::{MonitorArgs, MonitorProbe};
use anyhow::{bail, Result};
use rtgauge_result::output::{self, Existing};
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};

/// An example for the advice: the port rtgauge's documents and manifests use.
const EXAMPLE_PORT: u16 = 9808;

/// Where the figures go while the monitor runs. A monitor with neither is refused: `-o` alone
/// writes one document when it stops, which is what `rtgauge run --duration forever` does.
pub(super) struct Exporters {
    pub server: Option<(tiny_http::Server, SocketAddr)>,
}

pub(super) fn exporters(args: &MonitorArgs) -> Result<Exporters> {
    if args.listen.is_none() && args.textfile.is_none() {
        bail!(
            "nothing would read the figures: give --listen ADDR (Prometheus scrapes it, e.g. --listen 127.0.0.1:{EXAMPLE_PORT}) or --textfile DIR (node_exporter's textfile collector); to measure until stopped for one result, use `rtgauge run cyclic --duration forever`"
        );
    }
    let server = match &args.listen {
        Some(addr) => Some(listen(addr)?),
        None => None,
    };
    if let Some(dir) = &args.textfile {
        if !dir.is_dir() {
            bail!(
                "--textfile {}: not a directory; give node_exporter's --collector.textfile.directory",
                dir.display()
            );
        }
        output::check_directory(dir)
            .map_err(|e| anyhow::anyhow!("--textfile {}: {e}", dir.display()))?;
    }
    if let Some(path) = &args.output {
        output::check(
            path,
            if args.force {
                Existing::Replace
            } else {
                Existing::Refuse
            },
        )?;
    }
    Ok(Exporters { server })
}

/// The address of `--listen ADDR`: an IP address or a host name (resolved here), and a port.
pub(super) fn listen_address(addr: &str) -> Result<SocketAddr> {
    if let Ok(parsed) = addr.parse::<SocketAddr>() {
        return check_port(addr, parsed);
    }
    let Some((host, port)) = addr.rsplit_once(':') else {
        bail!(
            "--listen {addr}: no port; give HOST:PORT, e.g. --listen {}:{EXAMPLE_PORT} (0.0.0.0:{EXAMPLE_PORT} for every interface)",
            if addr.is_empty() { "127.0.0.1" } else { addr }
        );
    };
    // `:9808`, as node_exporter's --web.listen-address takes it: every interface.
    let host = if host.is_empty() { "0.0.0.0" } else { host };
    let Ok(port) = port.parse::<u32>() else {
        bail!("--listen {addr}: '{port}' is not a port number; give HOST:PORT, e.g. --listen {host}:{EXAMPLE_PORT}");
    };
    let Ok(port) = u16::try_from(port) else {
        bail!("--listen {addr}: port {port} is out of range (1 to 65535); e.g. --listen {host}:{EXAMPLE_PORT}");
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let resolved = (host, port).to_socket_addrs().map_err(|e| {
        anyhow::anyhow!("--listen {addr}: cannot resolve the host name {host} ({e}); give an address of this machine, e.g. --listen 127.0.0.1:{port} or 0.0.0.0:{port} for every interface")
    })?;
    let mut resolved: Vec<SocketAddr> = resolved.collect();
    // IPv4 first: `localhost` is then 127.0.0.1, which every scraper reaches.
    resolved.sort_by_key(|a| !a.is_ipv4());
    match resolved.first() {
        Some(&first) => check_port(addr, first),
        None => bail!("--listen {addr}: the host name {host} has no address; give an address of this machine, e.g. --listen 127.0.0.1:{port}"),
    }
}

fn check_port(addr: &str, parsed: SocketAddr) -> Result<SocketAddr> {
    if parsed.port() == 0 {
        bail!(
            "--listen {addr}: port 0 would be a random port that Prometheus cannot know; give one, e.g. --listen {}:{EXAMPLE_PORT}",
            parsed.ip()
        );
    }
    Ok(parsed)
}

/// Binds `--listen ADDR`, each refusal with its own advice.
fn listen(addr: &str) -> Result<(tiny_http::Server, SocketAddr)> {
    let at = listen_address(addr)?;
    let listener = TcpListener::bind(at).map_err(|e| {
        let advice = match e.kind() {
            ErrorKind::AddrInUse => "stop what holds it or choose another port".to_string(),
            ErrorKind::PermissionDenied => format!(
                "ports below 1024 need root or CAP_NET_BIND_SERVICE; choose another, e.g. {}:{EXAMPLE_PORT}",
                at.ip()
            ),
            ErrorKind::AddrNotAvailable => format!(
                "{} is not an address of this machine; give one of its addresses, or 0.0.0.0:{} for every interface",
                at.ip(),
                at.port()
            ),
            _ => "choose another --listen ADDR".to_string(),
        };
        anyhow::anyhow!("--listen {addr}: cannot listen on {at}: {e}; {advice}")
    })?;
    let server = tiny_http::Server::from_listener(listener, None)
        .map_err(|e| anyhow::anyhow!("--listen {addr}: cannot serve on {at}: {e}"))?;
    Ok((server, at))
}

/// The probe's period and the settings that give it its duty; `--runtime` checked here so
/// its advice names the flag (the probe's own message names its setting, `runtime=90%`).
pub(super) fn probe_settings(args: &MonitorArgs, probe: &str) -> Result<(u64, Vec<String>)> {
    if let Some(set) = args.set.first() {
        bail!("--set {set}: --set names the references of --probe clocksync; {probe} takes none");
    }
    match args.probe {
        MonitorProbe::Cyclic | MonitorProbe::Timerlat => {
            if args.runtime.is_some() {
                bail!("--runtime is for --probe noise; {probe}'s duty is one wake-up per --period");
            }
            if args.probe == MonitorProbe::Timerlat {
                if let Some(reason) = rtgauge_trace::timerlat_unavailable() {
                    bail!("--probe {probe}: {reason}; monitor with --probe cyclic");
                }
            }
            Ok((args.period.unwrap_or(1_000_000), Vec::new()))
        }
        MonitorProbe::Noise => {
            let period = args.period.unwrap_or(100_000_000);
            let runtime = args.runtime.as_deref().unwrap_or("10%");
            check_runtime(runtime, period)?;
            Ok((
                period,
                vec![
                    format!(
                        "{probe}.period={}",
                        rtgauge_core::units::format_duration_exact(period)
                    ),
                    format!("{probe}.runtime={runtime}"),
                ],
            ))
        }
        MonitorProbe::Clocksync => {
            unreachable!("the clocksync monitor has its own steps (sync.rs)")
        }
    }
}

/// `--runtime`: a whole share from 1 % to 100 %, or a duration no longer than the period.
fn check_runtime(runtime: &str, period: u64) -> Result<()> {
    let period_text = rtgauge_core::units::format_duration_exact(period);
    if let Some(share) = runtime.strip_suffix('%') {
        return match share.trim().parse::<u64>() {
            Ok(p) if (1..=100).contains(&p) => Ok(()),
            _ => bail!(
                "--runtime {runtime}: not a whole share from 1% to 100% of the period; e.g. --runtime 90% (polls 90 % of each {period_text}), or a duration such as --runtime 5ms"
            ),
        };
    }
    match rtgauge_core::units::parse_duration_ns(runtime) {
        Ok(ns) if ns > 0 && ns <= period => Ok(()),
        Ok(ns) if ns > period => bail!(
            "--runtime {runtime}: longer than the period {period_text}; give at most the period, or a share such as --runtime 90%"
        ),
        _ => bail!(
            "--runtime {runtime}: not a share or a duration; e.g. --runtime 10% or --runtime 5ms"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(addr: &str) -> String {
        listen_address(addr).unwrap_err().to_string()
    }

    #[test]
    fn listen_addresses_are_resolved_or_refused_naming_the_real_problem() {
        assert_eq!(
            listen_address("127.0.0.1:9808").unwrap(),
            "127.0.0.1:9808".parse().unwrap()
        );
        assert_eq!(
            listen_address("localhost:9808").unwrap(),
            "127.0.0.1:9808".parse().unwrap()
        );
        assert_eq!(
            listen_address("[::1]:9808").unwrap(),
            "[::1]:9808".parse().unwrap()
        );
        let range = error("127.0.0.1:99999");
        assert!(range.contains("port 99999 is out of range"), "{range}");
        assert!(range.contains("--listen 127.0.0.1:9808"), "{range}");
        let no_port = error("localhost");
        assert!(no_port.contains("no port"), "{no_port}");
        assert!(no_port.contains("--listen localhost:9808"), "{no_port}");
        assert_eq!(
            listen_address(":9808").unwrap(),
            "0.0.0.0:9808".parse().unwrap()
        );
        assert!(error("localhost:").contains("'' is not a port number"));
        assert!(error("127.0.0.1:0").contains("port 0"));
        assert!(error("127.0.0.1:http").contains("'http' is not a port number"));
        let unknown = error("no-such-host.invalid:9808");
        assert!(unknown.contains("cannot resolve"), "{unknown}");
        for message in [range, no_port, unknown] {
            assert!(!message.contains("stop what holds it"), "{message}");
            assert_eq!(message.lines().count(), 1);
        }
    }

    #[test]
    fn runtime_errors_name_the_flag_as_it_is_spelled() {
        let e = check_runtime("150%", 100_000_000).unwrap_err().to_string();
        assert!(e.starts_with("--runtime 150%:"), "{e}");
        assert!(
            e.contains("--runtime 90%") && !e.contains("runtime=90%"),
            "{e}"
        );
        let e = check_runtime("200ms", 100_000_000).unwrap_err().to_string();
        assert!(e.contains("longer than the period 100ms"), "{e}");
        assert!(check_runtime("soon", 100_000_000).is_err());
        assert!(check_runtime("10%", 100_000_000).is_ok());
        assert!(check_runtime("5ms", 100_000_000).is_ok());
    }
}
