//! The C ABI (include/rtgauge_app.h). The header's inline functions test `enabled` before
//! calling in, so a disabled point costs C callers one branch too.

use crate::layout::{Kind, OBJECT_VALUES};
use crate::producer::{self, Point};
use crate::AppError;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn fail(e: AppError) -> c_int {
    let text = CString::new(e.to_string()).unwrap_or_default();
    LAST_ERROR.with(|l| *l.borrow_mut() = text);
    -1
}

/// The message of the calling thread's last failed call (empty if none); valid until its
/// next failing call.
#[no_mangle]
pub extern "C" fn rtg_error() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}

/// Registers point `name` of `kind` (RTG_INTERVAL, RTG_EVENT, RTG_COUNTER, RTG_OBJECT);
/// `period_ns` > 0 declares an interval point periodic. 0 on success, -1 (see rtg_error).
///
/// # Safety
/// `name` is a NUL-terminated string and `out` points to writable memory for an rtg_point.
#[no_mangle]
pub unsafe extern "C" fn rtg_register(
    name: *const c_char,
    kind: u32,
    period_ns: u64,
    out: *mut Point,
) -> c_int {
    if name.is_null() || out.is_null() {
        return fail(AppError::InvalidName {
            name: "(null)".into(),
            reason: "no name was given".into(),
        });
    }
    let name = CStr::from_ptr(name).to_string_lossy();
    let kind = match Kind::from_u32(kind) {
        Some(Kind::EventF64) | None => {
            return fail(AppError::InvalidName {
                name: name.into_owned(),
                reason: format!(
                    "kind {kind} is none of RTG_INTERVAL, RTG_EVENT, RTG_COUNTER, RTG_OBJECT"
                ),
            })
        }
        Some(k) => k,
    };
    match producer::register(&name, kind, period_ns) {
        Ok(point) => {
            out.write(point);
            0
        }
        Err(e) => fail(e),
    }
}

/// Claims the calling thread's ring ahead of its first record. 0 or -1 (see rtg_error).
#[no_mangle]
pub extern "C" fn rtg_thread_init() -> c_int {
    match producer::thread_init() {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

/// Removes this process's shared-memory file (call before exiting).
#[no_mangle]
pub extern "C" fn rtg_shutdown() {
    producer::shutdown();
}

#[no_mangle]
pub extern "C" fn rtg_record_interval(point: Point, begun: u64, deadline_ns: u64) {
    point.end_with_deadline(begun, deadline_ns);
}

#[no_mangle]
pub extern "C" fn rtg_record_event_u64(point: Point, value: u64) {
    point.event_u64(value);
}

#[no_mangle]
pub extern "C" fn rtg_record_event_f64(point: Point, value: f64) {
    point.event_f64(value);
}

#[no_mangle]
pub extern "C" fn rtg_record_count(point: Point, increment: u64) {
    point.count(increment);
}

/// # Safety
/// `values` points to `count` readable u64 (only the first four are kept).
#[no_mangle]
pub unsafe extern "C" fn rtg_record_object(point: Point, values: *const u64, count: u32) {
    if values.is_null() {
        return;
    }
    let n = (count as usize).min(OBJECT_VALUES);
    point.snapshot(std::slice::from_raw_parts(values, n));
}
