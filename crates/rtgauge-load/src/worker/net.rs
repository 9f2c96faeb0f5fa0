//! `net`: network-stack and softirq load that never leaves the machine. A UDP flood from one
//! socket to another, both on 127.0.0.1, and, when this process may open an ICMP socket, an
//! echo flood to 127.0.0.1 (`ping -f localhost`, seeds 003 and 004). The only destination is
//! the [`LOOPBACK`] constant: no option or input can point this load elsewhere.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::{Ctx, Outcome};
use crate::kinds::idx;
use crate::shared::Slot;

/// The only address the network load ever sends to.
pub(crate) const LOOPBACK: Ipv4Addr = Ipv4Addr::LOCALHOST;

const DATAGRAM: usize = 1024;
const BATCH: u64 = 64;
/// An echo not answered within this is given up (like `ping -f`'s 10 ms).
const ECHO_TIMEOUT_US: i64 = 10_000;

pub(crate) fn run(ctx: &Ctx) -> Outcome {
    let slot = ctx.slot;
    let receiver = UdpSocket::bind((LOOPBACK, 0))
        .map_err(|e| format!("cannot bind a UDP socket on {LOOPBACK}: {e}"))?;
    let target = receiver
        .local_addr()
        .map_err(|e| format!("cannot read the UDP socket's address: {e}"))?;
    ensure_loopback(target)?;
    let sender = UdpSocket::bind((LOOPBACK, 0))
        .map_err(|e| format!("cannot bind a UDP socket on {LOOPBACK}: {e}"))?;
    sender
        .connect(target)
        .map_err(|e| format!("cannot connect the UDP sender to {target}: {e}"))?;
    std::thread::Builder::new()
        .name("udp-rx".into())
        .spawn(move || udp_receive(&receiver, slot))
        .map_err(|e| format!("cannot start the UDP receiver thread: {e}"))?;
    match icmp_socket() {
        Ok((sock, raw)) => {
            std::thread::Builder::new()
                .name("icmp".into())
                .spawn(move || echo_flood(&sock, raw, slot))
                .map_err(|e| format!("cannot start the ICMP thread: {e}"))?;
        }
        Err(reason) => slot.set_message(&format!(
            "ICMP echo flood skipped: {reason}; UDP flood only"
        )),
    }
    ctx.slot.set_running();
    let buf = [0x42u8; DATAGRAM];
    loop {
        for _ in 0..BATCH {
            // A full receive buffer drops datagrams or returns ENOBUFS: both are part of a
            // flood, so errors are not fatal.
            let _ = sender.send(&buf);
        }
        slot.add(idx::OPS, BATCH);
    }
}

fn ensure_loopback(addr: SocketAddr) -> Result<(), String> {
    if addr.ip().is_loopback() {
        Ok(())
    } else {
        Err(format!(
            "refusing to send to {addr}: the net load only targets loopback"
        ))
    }
}

fn udp_receive(socket: &UdpSocket, slot: &Slot) {
    let mut buf = [0u8; DATAGRAM];
    let (mut count, mut bytes) = (0u64, 0u64);
    loop {
        if let Ok(n) = socket.recv(&mut buf) {
            count += 1;
            bytes += n as u64;
        }
        if count == BATCH {
            slot.add(idx::NET_RECEIVED, count);
            slot.add(idx::NET_BYTES, bytes);
            (count, bytes) = (0, 0);
        }
    }
}

/// An ICMP socket: the unprivileged "ping" kind when net.ipv4.ping_group_range allows it, a
/// raw one with CAP_NET_RAW. Returns whether it is raw (replies then carry the IP header).
pub(crate) fn icmp_socket() -> Result<(OwnedFd, bool), String> {
    let open = |ty: libc::c_int| {
        // SAFETY: plain socket(2) call.
        let fd =
            unsafe { libc::socket(libc::AF_INET, ty | libc::SOCK_CLOEXEC, libc::IPPROTO_ICMP) };
        if fd < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            // SAFETY: a new descriptor we own.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        }
    };
    match open(libc::SOCK_DGRAM) {
        Ok(fd) => Ok((fd, false)),
        Err(dgram) => match open(libc::SOCK_RAW) {
            Ok(fd) => Ok((fd, true)),
            Err(raw) => Err(format!(
                "raw sockets not permitted ({raw}) and ping sockets refused ({dgram}); grant \
                 CAP_NET_RAW (run as root or setcap cap_net_raw+ep BINARY) or widen \
                 net.ipv4.ping_group_range"
            )),
        },
    }
}

/// `ping -f 127.0.0.1`: send an echo request, wait for its reply (or 10 ms), repeat.
fn echo_flood(sock: &OwnedFd, raw: bool, slot: &Slot) {
    let fd = sock.as_raw_fd();
    let timeout = libc::timeval {
        tv_sec: 0,
        tv_usec: ECHO_TIMEOUT_US as libc::suseconds_t,
    };
    // SAFETY: setsockopt reads `timeout`, which lives across the call.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
    let dest = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(LOOPBACK).to_be(),
        },
        sin_zero: [0; 8],
    };
    let id = (std::process::id() & 0xffff) as u16;
    let mut packet = [0u8; 64];
    let mut reply = [0u8; 1500];
    let mut seq: u16 = 0;
    loop {
        seq = seq.wrapping_add(1);
        build_echo(&mut packet, id, seq);
        // SAFETY: packet and dest are live for the call; lengths match.
        let sent = unsafe {
            libc::sendto(
                fd,
                packet.as_ptr().cast(),
                packet.len(),
                0,
                (&dest as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if sent < 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
            continue;
        }
        // A raw socket sees every ICMP packet on the host (our own request too): keep
        // reading until our reply or the timeout.
        for _ in 0..8 {
            // SAFETY: reply is a live, writable buffer of the length given.
            let n = unsafe { libc::recv(fd, reply.as_mut_ptr().cast(), reply.len(), 0) };
            if n <= 0 {
                break;
            }
            if is_our_reply(&reply[..n as usize], raw, id, seq) {
                slot.add(idx::NET_ICMP, 1);
                break;
            }
        }
    }
}

fn build_echo(packet: &mut [u8], id: u16, seq: u16) {
    packet.fill(0);
    packet[0] = 8; // echo request
    packet[4..6].copy_from_slice(&id.to_be_bytes());
    packet[6..8].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in packet[8..].iter_mut().enumerate() {
        *b = i as u8;
    }
    let sum = checksum(packet);
    packet[2..4].copy_from_slice(&sum.to_be_bytes());
}

fn is_our_reply(data: &[u8], raw: bool, id: u16, seq: u16) -> bool {
    let icmp = if raw {
        let Some(first) = data.first() else {
            return false;
        };
        let ihl = usize::from(first & 0x0f) * 4;
        match data.get(ihl..) {
            Some(rest) => rest,
            None => return false,
        }
    } else {
        data
    };
    if icmp.len() < 8 || icmp[0] != 0 {
        return false;
    }
    // Ping sockets rewrite the id to their own port and filter replies already.
    let id_ok = !raw || icmp[4..6] == id.to_be_bytes();
    id_ok && icmp[6..8] == seq.to_be_bytes()
}

/// The Internet checksum (RFC 1071).
fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in data.chunks(2) {
        let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_packets_checksum_to_zero() {
        let mut packet = [0u8; 64];
        build_echo(&mut packet, 0x1234, 7);
        assert_eq!(checksum(&packet), 0);
        let mut reply = packet;
        reply[0] = 0;
        assert!(is_our_reply(&reply, false, 0x1234, 7));
        assert!(!is_our_reply(&packet, false, 0x1234, 7));
    }

    #[test]
    fn only_loopback_is_a_target() {
        assert!(ensure_loopback("127.0.0.1:9".parse().unwrap()).is_ok());
        assert!(ensure_loopback("192.168.1.1:9".parse().unwrap()).is_err());
        assert!(LOOPBACK.is_loopback());
    }
}
