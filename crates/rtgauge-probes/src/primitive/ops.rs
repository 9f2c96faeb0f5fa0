//! The measured operations. Each one owns its kernel objects: they are created (and their
//! memory touched) before any loop starts and released on drop, so the hot loop only makes
//! the measured call. Names that live in a filesystem (message queue, shared memory, FIFO) are
//! unlinked as soon as they are open, so a killed run leaves nothing behind.

use rtgauge_core::probe::ProbeError;
use rtgauge_os::mqueue;
use rtgauge_os::sched::{sched_setattr, SchedAttr};
use std::ffi::CString;
use std::io;
use std::sync::atomic::AtomicU32;

const PROBE: &str = crate::names::PRIMITIVE;

/// One measured operation as the timing loops see it.
///
/// A *paired* operation has a call (`first`) and the call that undoes it (`second`), each a
/// series of its own: post then wait, write then read, lock then unlock. A single operation
/// has only `first` and keeps its own state meaningful (e.g. alternates two priorities).
pub(super) trait Calls {
    /// Series names of `first` and `second`; a single operation names itself twice.
    fn names(&self) -> [&'static str; 2];
    /// Whether `second` undoes `first` (read once, before measuring).
    fn paired(&self) -> bool {
        let [first, second] = self.names();
        first != second
    }
    /// How many `first` calls may be made before the matching `second` calls without
    /// blocking or failing: the largest usable batch.
    fn capacity(&self) -> usize {
        usize::MAX
    }
    /// The call on object `i` (0 ≤ i < batch; objects differ only where one object cannot
    /// take `batch` calls in a row, e.g. mutexes). True when the call succeeded.
    fn first(&mut self, i: usize) -> bool;
    /// The call that undoes `first(i)`.
    fn second(&mut self, _i: usize) -> bool {
        true
    }
    /// Extra labels (e.g. which system call a priority change used).
    fn labels(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

fn os_error(what: &str) -> ProbeError {
    ProbeError::os(PROBE, what)
}

// ---------------------------------------------------------------------------------------------
// POSIX semaphore

/// An unnamed process-private POSIX semaphore: `sem_post` with no waiter, `sem_wait` when a
/// unit is available (so it never blocks).
pub(super) struct Semaphore {
    sem: Box<libc::sem_t>,
}

impl Semaphore {
    pub fn new() -> Result<Semaphore, ProbeError> {
        // SAFETY: sem_t is plain data initialised by sem_init below; the box keeps its address
        // fixed for the semaphore's lifetime.
        let mut sem: Box<libc::sem_t> = Box::new(unsafe { std::mem::zeroed() });
        if unsafe { libc::sem_init(&mut *sem, 0, 0) } != 0 {
            return Err(os_error("sem_init"));
        }
        Ok(Semaphore { sem })
    }
}

impl Calls for Semaphore {
    fn names(&self) -> [&'static str; 2] {
        ["sem_post", "sem_wait"]
    }
    #[inline(always)]
    fn first(&mut self, _i: usize) -> bool {
        // SAFETY: the semaphore was initialised in new().
        unsafe { libc::sem_post(&mut *self.sem) == 0 }
    }
    #[inline(always)]
    fn second(&mut self, _i: usize) -> bool {
        // SAFETY: as above; a unit was posted by first(), so this never blocks.
        unsafe { libc::sem_wait(&mut *self.sem) == 0 }
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        // SAFETY: initialised in new(), nobody waits on it.
        unsafe { libc::sem_destroy(&mut *self.sem) };
    }
}

// ---------------------------------------------------------------------------------------------
// pthread mutexes

/// `batch` uncontended pthread mutexes, plain or with priority inheritance. A batch locks
/// `batch` different mutexes (a mutex cannot be locked twice), then unlocks them.
pub(super) struct Mutexes {
    mutexes: Box<[libc::pthread_mutex_t]>,
    pi: bool,
}

impl Mutexes {
    pub fn new(count: usize, pi: bool) -> Result<Mutexes, ProbeError> {
        let what = if pi { "PI mutex" } else { "mutex" };
        // SAFETY: pthread types are plain data initialised by their init functions; the boxed
        // slice never moves its elements.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            if libc::pthread_mutexattr_init(&mut attr) != 0 {
                return Err(os_error(&format!("pthread_mutexattr_init ({what})")));
            }
            if pi {
                let rc = libc::pthread_mutexattr_setprotocol(&mut attr, libc::PTHREAD_PRIO_INHERIT);
                if rc != 0 {
                    libc::pthread_mutexattr_destroy(&mut attr);
                    return Err(ProbeError::Unavailable(format!(
                        "priority-inheritance mutexes are not supported here (pthread_mutexattr_setprotocol: {})",
                        io::Error::from_raw_os_error(rc)
                    )));
                }
            }
            let mut mutexes: Box<[libc::pthread_mutex_t]> =
                (0..count.max(1)).map(|_| std::mem::zeroed()).collect();
            for (done, m) in mutexes.iter_mut().enumerate() {
                let rc = libc::pthread_mutex_init(m, &attr);
                if rc != 0 {
                    for m in mutexes.iter_mut().take(done) {
                        libc::pthread_mutex_destroy(m);
                    }
                    libc::pthread_mutexattr_destroy(&mut attr);
                    return Err(ProbeError::Os {
                        probe: PROBE,
                        what: format!("pthread_mutex_init ({what})"),
                        source: io::Error::from_raw_os_error(rc),
                    });
                }
            }
            libc::pthread_mutexattr_destroy(&mut attr);
            let mut made = Mutexes { mutexes, pi };
            // A PI mutex whose lock the kernel refuses (no futex PI support) fails here, once,
            // rather than in every sample.
            if !made.first(0) {
                return Err(ProbeError::Unavailable(format!(
                    "{what} cannot be locked here (pthread_mutex_lock failed)"
                )));
            }
            made.second(0);
            Ok(made)
        }
    }
}

impl Calls for Mutexes {
    fn names(&self) -> [&'static str; 2] {
        if self.pi {
            ["pi_mutex_lock", "pi_mutex_unlock"]
        } else {
            ["mutex_lock", "mutex_unlock"]
        }
    }
    fn capacity(&self) -> usize {
        self.mutexes.len()
    }
    #[inline(always)]
    fn first(&mut self, i: usize) -> bool {
        // SAFETY: i < capacity (the loops never exceed it); the mutex is initialised.
        unsafe { libc::pthread_mutex_lock(self.mutexes.get_unchecked_mut(i)) == 0 }
    }
    #[inline(always)]
    fn second(&mut self, i: usize) -> bool {
        // SAFETY: as above; this thread holds the mutex.
        unsafe { libc::pthread_mutex_unlock(self.mutexes.get_unchecked_mut(i)) == 0 }
    }
}

impl Drop for Mutexes {
    fn drop(&mut self) {
        for m in self.mutexes.iter_mut() {
            // SAFETY: initialised and unlocked.
            unsafe { libc::pthread_mutex_destroy(m) };
        }
    }
}

// ---------------------------------------------------------------------------------------------
// POSIX message queue

/// A POSIX message queue (the seeds' mailbox), non-blocking, unlinked once open.
pub(super) struct MessageQueue {
    mq: libc::mqd_t,
    capacity: usize,
    message: Vec<u8>,
    received: Vec<u8>,
}

fn read_proc_usize(path: &str) -> Option<usize> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl MessageQueue {
    /// Opens a queue that holds up to `wanted` messages of `size` bytes, or fewer when the
    /// limits (fs.mqueue.msg_max, RLIMIT_MSGQUEUE) allow fewer.
    pub fn new(wanted: usize, size: usize) -> Result<MessageQueue, ProbeError> {
        let name = mqueue::unique_name("mq");
        let mut capacity = wanted.max(1);
        let limit = read_proc_usize("/proc/sys/fs/mqueue/msg_max");
        let mut tried_limit = false;
        let mq = loop {
            let err = match mqueue::create(&name, capacity, size, libc::O_NONBLOCK) {
                Ok(mq) => break mq,
                Err(err) => err,
            };
            let code = err.raw_os_error().unwrap_or(0);
            // Too many messages for this user's limits: try the system limit, then halve.
            if matches!(code, libc::EINVAL | libc::EMFILE | libc::ENOMEM) && capacity > 1 {
                capacity = match limit {
                    Some(l) if !tried_limit && l < capacity => {
                        tried_limit = true;
                        l.max(1)
                    }
                    _ => capacity / 2,
                };
                continue;
            }
            return Err(ProbeError::Unavailable(match code {
                libc::ENOSYS => "POSIX message queues are not available: the kernel lacks CONFIG_POSIX_MQUEUE (mq_open: ENOSYS)".to_string(),
                libc::EINVAL => format!(
                    "POSIX message queue refused messages of {size} bytes (mq_open: {err}); use a msg-size within /proc/sys/fs/mqueue/msgsize_max"
                ),
                _ => format!("POSIX message queue could not be opened (mq_open: {err})"),
            }));
        };
        mqueue::unlink(&name);
        Ok(MessageQueue {
            mq,
            capacity,
            message: vec![0x5a; size],
            received: vec![0; size],
        })
    }
}

impl Calls for MessageQueue {
    fn names(&self) -> [&'static str; 2] {
        ["mq_send", "mq_receive"]
    }
    fn capacity(&self) -> usize {
        self.capacity
    }
    #[inline(always)]
    fn first(&mut self, _i: usize) -> bool {
        // SAFETY: the buffer is valid for its length; the queue is open.
        unsafe {
            libc::mq_send(
                self.mq,
                self.message.as_ptr() as *const libc::c_char,
                self.message.len(),
                0,
            ) == 0
        }
    }
    #[inline(always)]
    fn second(&mut self, _i: usize) -> bool {
        // SAFETY: the buffer holds one message of the queue's message size.
        unsafe {
            libc::mq_receive(
                self.mq,
                self.received.as_mut_ptr() as *mut libc::c_char,
                self.received.len(),
                std::ptr::null_mut(),
            ) >= 0
        }
    }
}

impl Drop for MessageQueue {
    fn drop(&mut self) {
        // SAFETY: closing the descriptor opened in new().
        unsafe { libc::mq_close(self.mq) };
    }
}

// ---------------------------------------------------------------------------------------------
// pipe and FIFO

/// The two ends of a pipe or FIFO, non-blocking, with room for a whole batch of messages.
pub(super) struct Channel {
    kind: ChannelKind,
    read_fd: i32,
    write_fd: i32,
    capacity: usize,
    message: Vec<u8>,
    received: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChannelKind {
    Pipe,
    Fifo,
}

impl Channel {
    pub fn new(kind: ChannelKind, wanted: usize, size: usize) -> Result<Channel, ProbeError> {
        let (read_fd, write_fd) = match kind {
            ChannelKind::Pipe => {
                let mut fds = [0i32; 2];
                // SAFETY: fds is a valid out-array of two descriptors.
                if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0
                {
                    return Err(os_error("pipe2"));
                }
                (fds[0], fds[1])
            }
            ChannelKind::Fifo => open_fifo()?,
        };
        let mut channel = Channel {
            kind,
            read_fd,
            write_fd,
            capacity: 1,
            message: vec![0x5a; size],
            received: vec![0; size],
        };
        // Grow the buffer so a whole batch fits; the kernel may grant less (pipe-max-size for
        // unprivileged users), and the batch then shrinks to what fits.
        let want_bytes = wanted.max(1).saturating_mul(size).min(i32::MAX as usize);
        // SAFETY: fcntl on our own descriptor with integer arguments.
        let mut bytes = unsafe { libc::fcntl(write_fd, libc::F_GETPIPE_SZ) };
        if bytes >= 0 && (bytes as usize) < want_bytes {
            let grown = unsafe { libc::fcntl(write_fd, libc::F_SETPIPE_SZ, want_bytes as i32) };
            if grown > 0 {
                bytes = grown;
            }
        }
        if bytes <= 0 {
            return Err(os_error("fcntl(F_GETPIPE_SZ)"));
        }
        channel.capacity = (bytes as usize / size).max(1);
        Ok(channel)
    }
}

/// Creates a FIFO in a fresh private temporary directory and opens both ends; the FIFO and
/// its directory are removed at once (the open descriptors keep it usable).
fn open_fifo() -> Result<(i32, i32), ProbeError> {
    let template = std::env::temp_dir().join("rtgauge-fifo-XXXXXX");
    let mut dir = template.into_os_string().into_encoded_bytes();
    dir.push(0);
    // SAFETY: dir is a writable NUL-terminated template.
    if unsafe { libc::mkdtemp(dir.as_mut_ptr() as *mut libc::c_char) }.is_null() {
        return Err(ProbeError::Unavailable(format!(
            "cannot create a directory for the FIFO in {} (mkdtemp: {}); set TMPDIR to a writable directory",
            std::env::temp_dir().display(),
            io::Error::last_os_error()
        )));
    }
    dir.pop();
    let dir = CString::new(dir).expect("mkdtemp output has no NUL");
    let path = {
        let mut p = dir.as_bytes().to_vec();
        p.extend_from_slice(b"/fifo");
        CString::new(p).expect("no NUL")
    };
    let cleanup = || {
        // SAFETY: valid paths; failures leave at most an empty directory behind.
        unsafe {
            libc::unlink(path.as_ptr());
            libc::rmdir(dir.as_ptr());
        }
    };
    // SAFETY: valid NUL-terminated path.
    if unsafe { libc::mkfifo(path.as_ptr(), 0o600) } != 0 {
        let e = os_error("mkfifo");
        cleanup();
        return Err(e);
    }
    // The read end opens first: a non-blocking write open fails (ENXIO) without a reader.
    // SAFETY: valid path and flags.
    let read_fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if read_fd < 0 {
        let e = os_error("open FIFO for reading");
        cleanup();
        return Err(e);
    }
    let write_fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if write_fd < 0 {
        let e = os_error("open FIFO for writing");
        unsafe { libc::close(read_fd) };
        cleanup();
        return Err(e);
    }
    cleanup();
    Ok((read_fd, write_fd))
}

impl Calls for Channel {
    fn names(&self) -> [&'static str; 2] {
        match self.kind {
            ChannelKind::Pipe => ["pipe_write", "pipe_read"],
            ChannelKind::Fifo => ["fifo_write", "fifo_read"],
        }
    }
    fn capacity(&self) -> usize {
        self.capacity
    }
    #[inline(always)]
    fn first(&mut self, _i: usize) -> bool {
        // SAFETY: valid buffer and descriptor.
        let n = unsafe {
            libc::write(
                self.write_fd,
                self.message.as_ptr() as *const libc::c_void,
                self.message.len(),
            )
        };
        n == self.message.len() as isize
    }
    #[inline(always)]
    fn second(&mut self, _i: usize) -> bool {
        // SAFETY: valid buffer and descriptor.
        let n = unsafe {
            libc::read(
                self.read_fd,
                self.received.as_mut_ptr() as *mut libc::c_void,
                self.received.len(),
            )
        };
        n == self.received.len() as isize
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        // SAFETY: closing our own descriptors.
        unsafe {
            libc::close(self.read_fd);
            libc::close(self.write_fd);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// POSIX shared memory

/// A POSIX shared-memory object of `size` bytes mapped shared; write = memcpy from a private
/// buffer into it, read = memcpy out of it into another private buffer.
pub(super) struct SharedMemory {
    map: *mut u8,
    size: usize,
    source: Vec<u8>,
    dest: Vec<u8>,
}

impl SharedMemory {
    pub fn new(size: usize) -> Result<SharedMemory, ProbeError> {
        let name = mqueue::unique_name("shm");
        // SAFETY: valid name; flags create a new private object.
        let fd = unsafe {
            libc::shm_open(
                name.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_RDWR | libc::O_CLOEXEC,
                0o600,
            )
        };
        if fd < 0 {
            return Err(ProbeError::Unavailable(format!(
                "POSIX shared memory is not usable (shm_open: {}); check that /dev/shm is a mounted tmpfs",
                io::Error::last_os_error()
            )));
        }
        // The name is not needed once open; unlinking now means nothing leaks.
        // SAFETY: valid name.
        unsafe { libc::shm_unlink(name.as_ptr()) };
        // SAFETY: our own descriptor.
        if unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
            let e = os_error(&format!("ftruncate of shared memory to {size} bytes"));
            unsafe { libc::close(fd) };
            return Err(e);
        }
        // SAFETY: mapping our descriptor shared; the result is checked.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        let e = (map == libc::MAP_FAILED).then(|| os_error("mmap of shared memory"));
        // SAFETY: the mapping keeps the object alive without the descriptor.
        unsafe { libc::close(fd) };
        if let Some(e) = e {
            return Err(e);
        }
        let map = map as *mut u8;
        // Touch every page now so the hot loop never takes a first-touch fault.
        // SAFETY: the mapping is size bytes long and writable.
        unsafe { std::ptr::write_bytes(map, 0, size) };
        Ok(SharedMemory {
            map,
            size,
            source: vec![0x5a; size],
            dest: vec![0; size],
        })
    }
}

impl Calls for SharedMemory {
    fn names(&self) -> [&'static str; 2] {
        ["shm_write", "shm_read"]
    }
    #[inline(always)]
    fn first(&mut self, _i: usize) -> bool {
        // SAFETY: both regions are size bytes long and do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(self.source.as_ptr(), self.map, self.size) };
        std::hint::black_box(self.map);
        true
    }
    #[inline(always)]
    fn second(&mut self, _i: usize) -> bool {
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(self.map, self.dest.as_mut_ptr(), self.size) };
        // Keeps the compiler from dropping a copy whose destination is never read.
        std::hint::black_box(self.dest.as_mut_ptr());
        true
    }
    fn labels(&self) -> Vec<(&'static str, String)> {
        vec![(
            "size",
            rtgauge_core::units::format_size_exact(self.size as u64),
        )]
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping made in new().
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.size) };
    }
}

// SAFETY: the mapping is owned by this value alone; it moves with it to the measuring thread.
unsafe impl Send for SharedMemory {}

// ---------------------------------------------------------------------------------------------
// eventfd

/// An eventfd in semaphore mode: each read takes one unit, so a batch of writes is matched by
/// as many successful reads (in counter mode the first read would empty it).
pub(super) struct EventFd {
    fd: i32,
}

impl EventFd {
    pub fn new() -> Result<EventFd, ProbeError> {
        // SAFETY: plain syscall.
        let fd = unsafe {
            libc::eventfd(
                0,
                libc::EFD_NONBLOCK | libc::EFD_CLOEXEC | libc::EFD_SEMAPHORE,
            )
        };
        if fd < 0 {
            return Err(ProbeError::Unavailable(format!(
                "eventfd is not available (eventfd: {})",
                io::Error::last_os_error()
            )));
        }
        Ok(EventFd { fd })
    }
}

impl Calls for EventFd {
    fn names(&self) -> [&'static str; 2] {
        ["eventfd_write", "eventfd_read"]
    }
    #[inline(always)]
    fn first(&mut self, _i: usize) -> bool {
        let one: u64 = 1;
        // SAFETY: 8 bytes from a u64, as the eventfd ABI defines.
        unsafe { libc::write(self.fd, &one as *const u64 as *const libc::c_void, 8) == 8 }
    }
    #[inline(always)]
    fn second(&mut self, _i: usize) -> bool {
        let mut value: u64 = 0;
        // SAFETY: 8 bytes into a u64.
        unsafe { libc::read(self.fd, &mut value as *mut u64 as *mut libc::c_void, 8) == 8 }
    }
}

impl Drop for EventFd {
    fn drop(&mut self) {
        // SAFETY: our own descriptor.
        unsafe { libc::close(self.fd) };
    }
}

// ---------------------------------------------------------------------------------------------
// futex

/// FUTEX_WAKE on a private futex word nobody waits on: the cost of the system call that
/// releases a lock when the fast path saw contention.
pub(super) struct FutexWake {
    word: Box<AtomicU32>,
}

impl FutexWake {
    pub fn new() -> FutexWake {
        FutexWake {
            word: Box::new(AtomicU32::new(0)),
        }
    }
}

impl Calls for FutexWake {
    fn names(&self) -> [&'static str; 2] {
        ["futex_wake", "futex_wake"]
    }
    #[inline(always)]
    fn first(&mut self, _i: usize) -> bool {
        // SAFETY: the futex word is a live, aligned u32; FUTEX_WAKE takes no other pointers.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.word.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<u32>(),
                0,
            ) >= 0
        }
    }
}

// ---------------------------------------------------------------------------------------------
// priority changes

fn sched_getattr() -> Result<SchedAttr, io::Error> {
    let mut attr = SchedAttr::default();
    // SAFETY: attr is a valid, correctly sized out-buffer for the calling thread (pid 0).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            std::mem::size_of::<SchedAttr>() as u32,
            0u32,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(attr)
}

fn policy_name(policy: i32) -> &'static str {
    match policy {
        libc::SCHED_OTHER => "other",
        libc::SCHED_FIFO => "fifo",
        libc::SCHED_RR => "rr",
        libc::SCHED_BATCH => "batch",
        libc::SCHED_IDLE => "idle",
        libc::SCHED_DEADLINE => "deadline",
        _ => "unknown",
    }
}

/// The nice value one step away from `nice` that stays in range (−20..=19).
fn neighbour_nice(nice: i32) -> i32 {
    if nice < 19 {
        nice + 1
    } else {
        nice - 1
    }
}

/// Whether this thread may go back from nice `high` to the lower value `low` (the kernel
/// lets anyone raise nice, but lowering needs CAP_SYS_NICE or a large enough RLIMIT_NICE).
fn may_lower_nice(low: i32) -> Result<(), String> {
    let p = rtgauge_core::rt::Privileges::current();
    let rlimit_nice =
        rtgauge_os::process::soft_limit(rtgauge_os::process::Limit::Nice).unwrap_or(0);
    if p.is_root() || p.cap_sys_nice || rlimit_nice >= (20 - low) as u64 {
        Ok(())
    } else {
        Err(format!(
            "changing a SCHED_OTHER thread's priority back to nice {low} needs CAP_SYS_NICE or RLIMIT_NICE >= {} (it is {rlimit_nice}); run as root or raise `nice` in /etc/security/limits.conf",
            20 - low
        ))
    }
}

/// The thread's current policy and its (FIFO/RR) priority or nice value.
fn current_sched() -> Result<(i32, i32), ProbeError> {
    // SAFETY: plain queries of the calling thread.
    let policy = unsafe { libc::sched_getscheduler(0) };
    if policy < 0 {
        return Err(os_error("sched_getscheduler"));
    }
    let value = if policy == libc::SCHED_FIFO || policy == libc::SCHED_RR {
        let mut param = libc::sched_param { sched_priority: 0 };
        if unsafe { libc::sched_getparam(0, &mut param) } != 0 {
            return Err(os_error("sched_getparam"));
        }
        param.sched_priority
    } else {
        // getpriority may legitimately return -1, so errno tells failure apart.
        unsafe { *libc::__errno_location() = 0 };
        let tid = unsafe { libc::gettid() } as libc::id_t;
        let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) };
        if nice == -1 && io::Error::last_os_error().raw_os_error().unwrap_or(0) != 0 {
            return Err(os_error("getpriority"));
        }
        nice
    };
    Ok((policy, value))
}

/// The FIFO/RR priority one step away from `p` that stays within 1..=99.
fn neighbour_priority(p: i32) -> i32 {
    if p > 1 {
        p - 1
    } else {
        p + 1
    }
}

/// How `setschedparam` changes the priority: pthread_setschedparam for FIFO/RR threads,
/// setpriority (the thread's nice value) for SCHED_OTHER threads.
enum PriorityCall {
    SetSchedParam { policy: i32, values: [i32; 2] },
    SetPriority { tid: libc::id_t, values: [i32; 2] },
}

/// `pthread_setschedparam` (or, for a SCHED_OTHER thread, `setpriority`) on the calling
/// thread, alternating between its priority p and p−1 (nice n and n+1), so every call really
/// changes the priority. The original priority is restored on drop.
pub(super) struct SetSchedParam {
    call: PriorityCall,
    next: usize,
    via: String,
}

impl SetSchedParam {
    pub fn new() -> Result<SetSchedParam, ProbeError> {
        let (policy, value) = current_sched()?;
        let (call, via) = match policy {
            libc::SCHED_FIFO | libc::SCHED_RR => {
                let other = neighbour_priority(value);
                (
                    PriorityCall::SetSchedParam {
                        policy,
                        values: [other, value],
                    },
                    format!(
                        "pthread_setschedparam {} {value}/{other}",
                        policy_name(policy)
                    ),
                )
            }
            libc::SCHED_DEADLINE => {
                return Err(ProbeError::Unavailable(
                    "the measuring thread is SCHED_DEADLINE, which has no priority for pthread_setschedparam to change; sched_setattr measures the deadline case".into(),
                ))
            }
            _ => {
                let other = neighbour_nice(value);
                may_lower_nice(value.min(other)).map_err(ProbeError::Unavailable)?;
                (
                    PriorityCall::SetPriority {
                        // SAFETY: gettid cannot fail.
                        tid: unsafe { libc::gettid() } as libc::id_t,
                        values: [other, value],
                    },
                    format!("setpriority {} nice {value}/{other}", policy_name(policy)),
                )
            }
        };
        let mut made = SetSchedParam { call, next: 0, via };
        // One round trip now, so a refusal is reported once with its reason.
        if !made.first(0) {
            return Err(ProbeError::Unavailable(format!(
                "the kernel refused the priority change {}; run as root or grant CAP_SYS_NICE",
                made.via
            )));
        }
        made.first(0);
        Ok(made)
    }
}

impl Calls for SetSchedParam {
    fn names(&self) -> [&'static str; 2] {
        ["setschedparam", "setschedparam"]
    }
    #[inline(always)]
    fn first(&mut self, _i: usize) -> bool {
        let i = self.next;
        self.next ^= 1;
        // SAFETY: changing the calling thread's own priority to a value validated in new().
        match &self.call {
            PriorityCall::SetSchedParam { policy, values } => {
                rtgauge_os::sched::set_own_sched_param(*policy, values[i])
            }
            PriorityCall::SetPriority { tid, values } => unsafe {
                libc::setpriority(libc::PRIO_PROCESS, *tid, values[i]) == 0
            },
        }
    }
    fn labels(&self) -> Vec<(&'static str, String)> {
        vec![("via", self.via.clone())]
    }
}

impl Drop for SetSchedParam {
    fn drop(&mut self) {
        // values[1] is the original priority.
        if self.next == 1 {
            self.first(0);
        }
    }
}

/// `sched_setattr` on the calling thread, alternating between two settings of its own
/// policy: priority p and p−1 (FIFO/RR), nice n and n+1 (OTHER), or for SCHED_DEADLINE the
/// runtime r and 90 % of r. The original setting is restored on drop.
pub(super) struct SchedSetattr {
    attrs: [SchedAttr; 2],
    next: usize,
    via: String,
}

impl SchedSetattr {
    pub fn new() -> Result<SchedSetattr, ProbeError> {
        let original = sched_getattr().map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOSYS) {
                ProbeError::Unavailable(
                    "sched_setattr is not available: the kernel predates 3.14 (ENOSYS)".into(),
                )
            } else {
                ProbeError::Os {
                    probe: PROBE,
                    what: "sched_getattr".into(),
                    source: e,
                }
            }
        })?;
        let mut original = original;
        original.size = std::mem::size_of::<SchedAttr>() as u32;
        // Flags returned by the kernel (e.g. reset-on-fork) are kept; utilisation clamping is
        // not requested.
        let mut other = original;
        let policy = original.policy as i32;
        let via = match policy {
            libc::SCHED_FIFO | libc::SCHED_RR => {
                other.priority = neighbour_priority(original.priority as i32) as u32;
                format!(
                    "sched_setattr {} {}/{}",
                    policy_name(policy),
                    original.priority,
                    other.priority
                )
            }
            libc::SCHED_DEADLINE => {
                other.runtime = original.runtime / 10 * 9;
                format!(
                    "sched_setattr deadline runtime {}/{}",
                    rtgauge_core::units::format_duration_ns(original.runtime),
                    rtgauge_core::units::format_duration_ns(other.runtime)
                )
            }
            _ => {
                other.nice = neighbour_nice(original.nice);
                may_lower_nice(original.nice.min(other.nice)).map_err(ProbeError::Unavailable)?;
                format!(
                    "sched_setattr {} nice {}/{}",
                    policy_name(policy),
                    original.nice,
                    other.nice
                )
            }
        };
        let mut made = SchedSetattr {
            attrs: [other, original],
            next: 0,
            via,
        };
        // One round trip now, so a refusal is reported once with its reason.
        if !made.first(0) {
            return Err(ProbeError::Unavailable(format!(
                "sched_setattr refused to change {} ({})",
                made.via,
                io::Error::last_os_error()
            )));
        }
        made.first(0);
        Ok(made)
    }
}

impl Calls for SchedSetattr {
    fn names(&self) -> [&'static str; 2] {
        ["sched_setattr", "sched_setattr"]
    }
    #[inline(always)]
    fn first(&mut self, _i: usize) -> bool {
        let i = self.next;
        self.next ^= 1;
        sched_setattr(&self.attrs[i])
    }
    fn labels(&self) -> Vec<(&'static str, String)> {
        vec![("via", self.via.clone())]
    }
}

impl Drop for SchedSetattr {
    fn drop(&mut self) {
        if self.next == 1 {
            self.first(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(c: &mut dyn Calls, n: usize) {
        let n = n.min(c.capacity());
        for i in 0..n {
            assert!(c.first(i), "{} {i}", c.names()[0]);
        }
        if c.paired() {
            for i in 0..n {
                assert!(c.second(i), "{} {i}", c.names()[1]);
            }
        }
    }

    #[test]
    fn every_operation_balances_its_state_over_a_batch() {
        let mut ops: Vec<Box<dyn Calls>> = vec![
            Box::new(Semaphore::new().unwrap()),
            Box::new(Mutexes::new(16, false).unwrap()),
            Box::new(Channel::new(ChannelKind::Pipe, 16, 8).unwrap()),
            Box::new(Channel::new(ChannelKind::Fifo, 16, 8).unwrap()),
            Box::new(SharedMemory::new(4096).unwrap()),
            Box::new(EventFd::new().unwrap()),
            Box::new(FutexWake::new()),
        ];
        if let Ok(m) = Mutexes::new(16, true) {
            ops.push(Box::new(m));
        }
        if let Ok(q) = MessageQueue::new(16, 8) {
            ops.push(Box::new(q));
        }
        for op in ops.iter_mut() {
            // Twice: the second round only succeeds when the first left the state balanced.
            round_trip(op.as_mut(), 16);
            round_trip(op.as_mut(), 16);
        }
    }

    #[test]
    fn channels_shrink_the_batch_to_what_fits() {
        let c = Channel::new(ChannelKind::Pipe, 100, 8).unwrap();
        assert!(c.capacity() >= 100);
        let c = Channel::new(ChannelKind::Pipe, 1, 4096).unwrap();
        assert!(c.capacity() >= 1);
    }

    #[test]
    fn priority_changes_restore_the_original_priority() {
        let before = current_sched().unwrap();
        if let Ok(mut s) = SetSchedParam::new() {
            s.first(0);
            drop(s);
        }
        assert_eq!(current_sched().unwrap(), before);
        if let Ok(mut s) = SchedSetattr::new() {
            s.first(0);
            drop(s);
        }
        assert_eq!(current_sched().unwrap(), before);
    }

    #[test]
    fn nice_neighbours_stay_in_range() {
        assert_eq!(neighbour_nice(0), 1);
        assert_eq!(neighbour_nice(19), 18);
        assert_eq!(neighbour_priority(95), 94);
        assert_eq!(neighbour_priority(1), 2);
    }
}
