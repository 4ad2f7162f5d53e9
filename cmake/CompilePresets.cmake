# cordon_compile_presets(OUT): a custom command writing OUT, the shipped presets compiled into
# the policy trees they parse to (core/presetgen, core/src/policy_compiled.hpp). The target
# cordon-presetgen is defined in core/.
function(cordon_compile_presets out)
  # The files the presets are embedded from (EmbedPresets.cmake): every policies/*.toml.
  file(GLOB files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/policies/*.toml)
  set(args)
  foreach(file ${files})
    get_filename_component(preset ${file} NAME_WE)
    list(APPEND args ${preset}=${file})
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND cordon-presetgen ${out} ${args}
    DEPENDS cordon-presetgen ${files}
    COMMENT "compiling shipped presets")
endfunction()
