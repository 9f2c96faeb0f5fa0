//! Tests of the rt-app reader ([`super`]): its grammar, and the rt-app project's own
//! examples.

mod grammar {
    use super::super::super::spec::{parse, Platform, TaskPolicy};
    use super::super::*;

    #[test]
    fn an_rt_app_periodic_set_reads_as_the_same_tasks() {
        let json = r#"{
            "global": { "duration": 5 },
            "tasks": {
                "servo": { "loop": -1, "run": 300, "timer": { "ref": "servo", "period": 1000 },
                           "policy": "SCHED_FIFO", "priority": 90, "cpus": [1] },
                "planner": { "run": 2000, "timer": { "ref": "p", "period": 10000 },
                             "policy": "SCHED_FIFO", "priority": 20 }
            }
        }"#;
        let set = parse(json, &Platform::for_tests()).unwrap();
        let servo = set.tasks.iter().find(|t| t.name == "servo").unwrap();
        assert_eq!(
            (servo.work_ns, servo.period_ns, servo.priority, servo.cpu),
            (300_000, 1_000_000, 90, Some(1))
        );
        assert_eq!(servo.policy, TaskPolicy::Fifo);
        let planner = set.tasks.iter().find(|t| t.name == "planner").unwrap();
        assert_eq!(
            (planner.work_ns, planner.period_ns, planner.cpu),
            (2_000_000, 10_000_000, None)
        );
        assert!(set.programs.tasks.is_empty());
        assert!(set.programs.notes.iter().any(|n| n.contains("--duration")));
    }

    #[test]
    fn repeated_and_numbered_keys_are_events_in_order() {
        let json = r#"{ "tasks": { "t": { "loop": 2, "run": 10, "sleep1": 20, "run": 30,
            "lock": "m", "signal": "q", "unlock": "m", "resume": "u", "suspend": "" } } }"#;
        let set = parse(json, &Platform::for_tests()).unwrap();
        let t = &set.programs.tasks[0];
        assert_eq!(t.loops, Some(2));
        assert_eq!(
            t.phases[0].steps,
            [
                Step::Run(10_000),
                Step::Sleep(20_000),
                Step::Run(30_000),
                Step::Lock(0),
                Step::Signal(0),
                Step::Unlock(0),
                Step::Resume(1),
                Step::Suspend(2),
            ]
        );
        assert_eq!(set.programs.objects.conds, ["q", "u", "t"]);
        // The default policy is rt-app's: SCHED_OTHER.
        assert_eq!(t.policy, TaskPolicy::Other);
    }

    #[test]
    fn instances_phases_timers_barriers_and_forks() {
        let json = r#"{ "global": { "default_policy": "SCHED_FIFO", "pi_enabled": true },
          "tasks": {
            "a": { "instance": 2, "loop": -1, "phases": {
                "light": { "loop": 3, "run": 100, "timer": { "ref": "unique", "period": 1000 } },
                "heavy": { "loop": 3, "run": 900, "timer": { "ref": "unique", "period": 1000, "mode": "absolute" } } } },
            "b": { "barrier": "x", "fork": "c", "runtime": 5 },
            "c": { "instance": 0, "barrier": "x", "run": 5, "sleep": 5 }
          } }"#;
        let set = parse(json, &Platform::for_tests()).unwrap();
        let p = &set.programs;
        let names: Vec<&str> = p.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a-0", "a-1", "b", "c"]);
        assert_eq!(p.tasks[0].phases.len(), 2);
        assert_eq!((p.tasks[0].phases[1].loops, p.tasks[0].own_timers), (3, 1));
        assert_eq!(
            (p.tasks[0].policy, p.tasks[0].priority),
            (TaskPolicy::Fifo, 10)
        );
        assert!(matches!(
            p.tasks[0].phases[1].steps[1],
            Step::Timer {
                absolute: true,
                period_ns: 1_000_000,
                ..
            }
        ));
        // b's fork starts c's thread; c starts only so.
        assert_eq!(p.tasks[2].phases[0].steps[1], Step::Fork(3));
        assert!(!p.tasks[3].starts);
        // The barrier counts the threads that use it.
        assert_eq!(p.objects.barriers, [("x".to_string(), 2)]);
        assert!(p.objects.priority_inheritance);
    }

    #[test]
    fn what_rtgauge_does_not_run_is_refused_by_task_phase_and_event() {
        let e = |json: &str| parse(json, &Platform::for_tests()).unwrap_err().to_string();
        let err = e(
            r#"{ "tasks": { "t": { "phases": { "p1": { "run": 10, "nodes_membind": [0] } } } } }"#,
        );
        assert!(
            err.starts_with("task t: phase p1: nodes_membind: not an rt-app event"),
            "{err}"
        );
        let err = e(r#"{ "tasks": { "thread0": { "exec": 5000, "period": 5000 } } }"#);
        assert!(
            err.starts_with("task thread0: exec: a key of rt-app's 2014 grammar"),
            "{err}"
        );
        let err = e(r#"{ "tasks": { "t": { "run": 10, "cpus": [0, 1] } } }"#);
        assert!(
            err.starts_with("task t: cpus: [0, 1]: rtgauge places a task on one CPU"),
            "{err}"
        );
        let err = e(r#"{ "tasks": { "t": { "run": 10, "fork": "nobody" } } }"#);
        assert!(err.starts_with("task t: fork: forks 'nobody'"), "{err}");
        let err = e(r#"{ "tasks": { "t": { "policy": "SCHED_DEADLINE", "run": 10 } } }"#);
        assert!(err.starts_with("task t: dl-runtime: missing"), "{err}");
        let err = e(r#"{ "tasks": { "t": { "priority": 40, "run": 10 } } }"#);
        assert!(
            err.starts_with("task t: priority: 40 is outside -20 to 19"),
            "{err}"
        );
        let err = e(r#"{ "tasks": { "t": { "run": 10 } }, "global": { "sched_magic": 1 } }"#);
        assert!(
            err.starts_with("global.sched_magic: not an rt-app global setting"),
            "{err}"
        );
    }
}

mod real_files {
    use super::super::super::spec::{parse, Platform};
    use std::path::PathBuf;

    /// The rt-app project's own documentation examples (`doc/examples`), as kept in
    /// `../shared/real-clients/rt-app/` beside the clone (origins in its SOURCES.md).
    const EXAMPLES: [&str; 15] = [
        "template",
        "tutorial-example1",
        "tutorial-example2",
        "tutorial-example3",
        "tutorial-example4",
        "tutorial-example5",
        "tutorial-example7",
        "tutorial-example9",
        "custom-slice",
        "cpufreq_governor_efficiency-dvfs",
        "mp3-short",
        "browser-short",
        "video-short",
        "spreading-tasks",
        "merge-thread0",
    ];

    fn read(name: &str) -> String {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/real-clients/rt-app")
            .join(format!("rt-app_{name}.json"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}: these tests read real third-party files from ../shared/real-clients beside the clone",
                path.display()
            )
        })
    }

    /// Every example is read, except the one rt-app itself cannot parse (a key without a
    /// value) and the fragment in rt-app's 2014 grammar, each refused in one line by name.
    #[test]
    fn the_rt_app_projects_examples_are_read_but_two() {
        let platform = Platform {
            min_period_ns: 10_000,
            online_cpus: vec![0, 1],
        };
        let mut refused = Vec::new();
        for name in EXAMPLES {
            match parse(&read(name), &platform) {
                Ok(set) => println!(
                    "{name}: {} periodic, {} with events ({})",
                    set.tasks.len(),
                    set.programs.tasks.len(),
                    set.programs.notes.join("; ")
                ),
                Err(e) => {
                    println!("{name}: refused: {e}");
                    assert!(!e.to_string().contains('\n'));
                    refused.push((name, e.to_string()));
                }
            }
        }
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(refused[0].1.contains("line 6, column 13"), "{refused:?}");
        assert!(
            refused[1]
                .1
                .starts_with("task thread0: exec: a key of rt-app's 2014 grammar"),
            "{refused:?}"
        );
    }
}
