//! The WebAssembly proposals guests may use: one place, read by the runtime and by the engine
//! that pre-initialises components.

use wasmtime::Config;

/// The WebAssembly proposals a guest may use beyond wasmtime's defaults, and the ones it may not.
///
/// Exception handling (`try_table`, `throw`, `exnref`) is on, so that a component's C++ can
/// catch its own throws and C code's `longjmp` can be a throw. wasmtime holds exception objects in a GC heap, which
/// is why the host is built with the `gc` feature; the GC proposal itself (structs, arrays,
/// typed function references) stays off, so a component that uses it is refused when it is
/// compiled. So is the legacy `try`/`catch` encoding, which wasmtime keeps only for the spec tests.
pub fn guest_features(config: &mut Config) -> &mut Config {
    config
        .wasm_exceptions(true)
        .wasm_gc(false)
        .wasm_function_references(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::Engine;
    use wasmtime::component::Component;

    fn guest_engine() -> Engine {
        let mut config = Config::new();
        guest_features(&mut config);
        Engine::new(&config).expect("engine")
    }

    fn compile(text: &str) -> wasmtime::Result<Component> {
        let bytes = wat::parse_str(text).expect("wat");
        Component::new(&guest_engine(), bytes)
    }

    fn error_chain(error: wasmtime::Error) -> String {
        format!("{error:#}")
    }

    #[test]
    fn a_component_that_throws_and_catches_compiles() {
        let component = compile(
            r#"(component (core module
                (tag $error (param i32))
                (func (export "caught") (result i32)
                  (block $handler (result i32)
                    (try_table (catch $error $handler)
                      (throw $error (i32.const 7)))
                    (i32.const 0)))))"#,
        );
        assert!(
            component.is_ok(),
            "{}",
            component.err().map(error_chain).unwrap_or_default()
        );
    }

    #[test]
    fn a_component_that_uses_gc_types_is_refused() {
        let error = compile(
            r#"(component (core module
                (type $point (struct (field i32)))
                (func (export "make") (result anyref)
                  (struct.new $point (i32.const 1)))))"#,
        )
        .map(|_| ())
        .expect_err("the GC proposal is off for guests");
        let text = error_chain(error);
        assert!(text.to_lowercase().contains("gc"), "{text}");
    }

    #[test]
    fn the_legacy_exception_encoding_is_refused() {
        let error = compile(
            r#"(component (core module
                (tag $error)
                (func (export "legacy")
                  try
                    throw $error
                  catch $error
                  end)))"#,
        )
        .map(|_| ())
        .expect_err("legacy try/catch is not accepted");
        let text = error_chain(error);
        assert!(text.contains("legacy_exceptions"), "{text}");
    }
}
