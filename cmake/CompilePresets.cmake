# cordon_compile_presets(OUT): a custom command writing OUT, the shipped presets compiled into
# the policy trees they parse to (core/presetgen, core/src/policy_compiled.hpp). The target
# cordon-presetgen is defined in core/.
function(cordon_compile_presets out)
  set(args)
  set(files)
  foreach(preset minimal standard generous strict permissive)
    list(APPEND args ${preset}=${PROJECT_SOURCE_DIR}/policies/${preset}.toml)
    list(APPEND files ${PROJECT_SOURCE_DIR}/policies/${preset}.toml)
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND cordon-presetgen ${out} ${args}
    DEPENDS cordon-presetgen ${files}
    COMMENT "compiling shipped presets")
endfunction()
