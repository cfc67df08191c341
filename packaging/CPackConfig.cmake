# cpack -G DEB: the binary, its .desktop entry, icon and AppStream metainfo, with the Debian runtime
# packages it needs found by dpkg-shlibdeps (Qt 6, QCustomPlot, simdjson); libcurl recommended.
install(FILES ${PROJECT_SOURCE_DIR}/resources/weightscope.desktop DESTINATION share/applications)
install(FILES ${PROJECT_SOURCE_DIR}/resources/weightscope.svg DESTINATION share/icons/hicolor/scalable/apps)
install(FILES ${PROJECT_SOURCE_DIR}/resources/io.github.weightscope.Weightscope.metainfo.xml DESTINATION share/metainfo)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME weightscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Weightscope")
set(CPACK_PACKAGE_CONTACT "Weightscope developers <dev@weightscope.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Explore and validate large-language-model checkpoints (safetensors, GGUF, MoE)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcurl is opened at run time, for remote checkpoints only (core/io/curl_library.h), so
# dpkg-shlibdeps cannot see it: recommended, since a local checkpoint does not need it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4t64 | libcurl4")
set(CPACK_STRIP_FILES ON)  # debug info stays in the build tree
include(CPack)
