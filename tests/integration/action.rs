//! The composite GitHub Action (`action.yml`): every input reaches its step and every output
//! comes from the tool, and its steps' scripts run on a simulated runner (`GITHUB_OUTPUT`,
//! `GITHUB_STEP_SUMMARY` and `RUNNER_TEMP` files of the test's own). `.ci/run` also runs the
//! install step's cargo build.

use crate::support::harness::{Scratch, binary, program};

/// A file of the repository, as text.
fn repository_file(path: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The keys of the top-level `section` of action.yml (its two-space-indented names).
fn action_keys(action: &str, section: &str) -> Vec<String> {
    action
        .split(&format!("\n{section}:\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("action.yml has no {section}"))
        .lines()
        .take_while(|line| line.is_empty() || line.starts_with(' '))
        .filter_map(|line| line.strip_prefix("  "))
        .filter(|line| !line.starts_with(' '))
        .map(|line| line.trim_end_matches(':').to_string())
        .collect()
}

#[test]
fn the_action_maps_every_input_to_its_step_and_every_output_from_it() {
    let action = repository_file("action.yml");
    let run = repository_file("action/run.sh");
    let install = repository_file("action/install.sh");
    let inputs = action_keys(&action, "inputs");
    assert!(inputs.len() >= 10, "{inputs:?}");
    for input in &inputs {
        let value = format!("${{{{ inputs.{input} }}}}");
        let variable = format!("INPUT_{}", input.to_uppercase());
        match input.as_str() {
            "working_directory" => assert!(action.contains(&format!("working-directory: {value}"))),
            _ => {
                assert!(action.contains(&format!("{variable}: {value}")), "{input}");
                assert!(
                    run.contains(&variable) || install.contains(&variable),
                    "no step reads {variable}"
                );
            }
        }
    }
    let outputs = action_keys(&action, "outputs");
    assert_eq!(
        outputs,
        [
            "attempts",
            "exit_code",
            "outcome",
            "reason",
            "elapsed_seconds"
        ]
    );
    for output in outputs {
        assert!(action.contains(&format!("value: ${{{{ steps.retry.outputs.{output} }}}}")));
    }
}

#[test]
fn the_actions_steps_run_on_a_simulated_runner() {
    let scratch = Scratch::new();
    let repository = env!("CARGO_MANIFEST_DIR");
    std::fs::create_dir(scratch.path("runner-temp")).unwrap();
    for file in ["install-output", "output", "summary"] {
        std::fs::write(scratch.path(file), "").unwrap();
    }
    let step = |script: &str| {
        program(&format!("{repository}/action/{script}"))
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_ACTION_PATH", repository)
            .env("RUNNER_TEMP", scratch.path("runner-temp"))
            .env("GITHUB_STEP_SUMMARY", scratch.path("summary"))
    };
    step("install.sh")
        .env("INPUT_BINARY", binary())
        .env("GITHUB_OUTPUT", scratch.path("install-output"))
        .run()
        .expect_code(0);
    let installed = scratch.read("install-output");
    let binary = installed
        .strip_prefix("binary=")
        .expect("the install step gives the binary")
        .trim_end();
    let command = "echo try $RETRY_ATTEMPT; test $RETRY_ATTEMPT = 2";
    let run = step("run.sh")
        .env("GITHUB_OUTPUT", scratch.path("output"))
        .env("RETRY_BINARY", binary)
        .env("INPUT_COMMAND", command)
        .env("INPUT_MAX_ATTEMPTS", "3")
        .env("INPUT_BASE", "0s")
        .env("INPUT_SHELL", "bash")
        .env("INPUT_EXTRA_ARGS", "--verbose\n")
        .run();
    run.expect_code(0)
        .expect_stdout("try 1\ntry 2\n")
        .expect_stderr(&format!(
            "::group::attempt 1/3: bash --noprofile --norc -eo pipefail -c '{command}'\n"
        ))
        .expect_stderr("retry: attempt 2/3 succeeded after ");
    assert!(
        scratch
            .read("output")
            .starts_with("attempts=2\nexit_code=0\noutcome=success\n")
    );
    assert!(
        scratch
            .read("summary")
            .starts_with("### retry: succeeded after 2 attempts\n")
    );
    let pipefail = step("run.sh")
        .env("GITHUB_OUTPUT", scratch.path("output"))
        .env("RETRY_BINARY", binary)
        .env("INPUT_COMMAND", "false | true")
        .env("INPUT_MAX_ATTEMPTS", "2")
        .env("INPUT_BASE", "0s")
        .run();
    pipefail
        .expect_code(1)
        .expect_stderr("::error title=retry::");
    assert!(
        scratch
            .read("output")
            .contains("\nattempts=2\nexit_code=1\noutcome=failure\n")
    );
    // Rules, a line each: the second stops at once.
    let ruled = step("run.sh")
        .env("GITHUB_OUTPUT", scratch.path("output"))
        .env("RETRY_BINARY", binary)
        .env("INPUT_COMMAND", "echo fatal >&2; exit 1")
        .env("INPUT_STOP_ON", "9\nstderr:^fatal$\n")
        .env("INPUT_BASE", "0s")
        .run();
    ruled
        .expect_code(1)
        .expect_stderr("exit status 1 is not retried: --stop-on stderr:^fatal$");
}

#[test]
fn the_actions_default_attempts_are_the_tools() {
    let action = repository_file("action.yml");
    let input = action
        .split("\n  max_attempts:\n")
        .nth(1)
        .expect("the max_attempts input");
    let default = input
        .lines()
        .find_map(|line| line.trim().strip_prefix("default: "))
        .expect("its default")
        .trim_matches('"');
    let command = retry_exec::full_command();
    let tools = command
        .get_arguments()
        .find(|arg| arg.get_long() == Some("max-attempts"))
        .and_then(|arg| arg.get_default_values().first())
        .expect("--max-attempts' default");
    assert_eq!(default, tools.to_str().unwrap());
}

#[test]
fn a_relative_binary_is_found_from_the_workspace_and_a_bare_one_on_path() {
    let scratch = Scratch::new();
    let repository = env!("CARGO_MANIFEST_DIR");
    let workspace = scratch.path("workspace");
    std::fs::create_dir_all(workspace.join("tools")).unwrap();
    std::fs::create_dir_all(workspace.join("sub")).unwrap();
    std::fs::copy(binary(), workspace.join("tools/retry")).unwrap();
    let path = format!("{}:/usr/bin:/bin", workspace.join("tools").display());
    for (input, runner_path) in [("./tools/retry", "/usr/bin:/bin"), ("retry", path.as_str())] {
        let output = scratch.path("install-output");
        std::fs::write(&output, "").unwrap();
        program(&format!("{repository}/action/install.sh"))
            .env("GITHUB_ACTION_PATH", repository)
            .env("GITHUB_WORKSPACE", &workspace)
            .env("GITHUB_OUTPUT", &output)
            .env("PATH", runner_path)
            .env("INPUT_BINARY", input)
            .current_dir(&workspace)
            .run()
            .expect_code(0);
        let installed = scratch.read("install-output");
        let binary = installed.strip_prefix("binary=").unwrap().trim_end();
        assert!(binary.starts_with('/'), "{input}: {installed}");
        std::fs::write(scratch.path("output"), "").unwrap();
        program(&format!("{repository}/action/run.sh"))
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_OUTPUT", scratch.path("output"))
            .env("RETRY_BINARY", binary)
            .env("INPUT_COMMAND", "test -d ../tools")
            .current_dir(workspace.join("sub"))
            .run()
            .expect_code(0);
        assert!(
            scratch.read("output").starts_with("attempts=1\n"),
            "{input}"
        );
    }
    let missing = program(&format!("{repository}/action/install.sh"))
        .env("GITHUB_ACTION_PATH", repository)
        .env("GITHUB_WORKSPACE", &workspace)
        .env("GITHUB_OUTPUT", scratch.path("install-output"))
        .env("INPUT_BINARY", "no-such-retry")
        .run();
    missing
        .expect_code(125)
        .expect_stderr("names no program on PATH: no-such-retry");
}
